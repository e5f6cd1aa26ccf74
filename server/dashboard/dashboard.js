// The coordinator dashboard: polls the server's JSON API (docs/HTTP.md) and redraws.
// No libraries and no network beyond this server; the chart is hand-drawn SVG.
'use strict';

const POLL_MS = 2000;
const THROUGHPUT_MS = 15000;
const SVG = 'http://www.w3.org/2000/svg';
let range = 'hour';
let recordsKey = '';  // covered prefixes and record counts of the records shown
let drawnEvents = '';

const $ = (id) => document.getElementById(id);

async function getJson(path) {
  const r = await fetch(path, {credentials: 'same-origin', cache: 'no-store'});
  if (!r.ok) throw new Error(path + ': HTTP ' + r.status);
  return r.json();
}

// "1.23e12" style for big rates, plain below a million.
function compact(x) {
  if (x === null || x === undefined || !isFinite(x)) return '–';
  if (Math.abs(x) < 1e6) return Math.round(x).toLocaleString('en-US');
  const e = Math.floor(Math.log10(Math.abs(x)));
  return (x / Math.pow(10, e)).toFixed(2) + 'e' + e;
}

// log2 of a decimal string (exact integers up to 2^128) to 2 decimals.
function log2(dec) {
  const n = BigInt(dec);
  if (n <= 0n) return 0;
  const bits = n.toString(2).length;
  const shift = bits > 53 ? BigInt(bits - 53) : 0n;
  return Math.log2(Number(n >> shift)) + Number(shift);
}

function duration(s) {
  if (s === null || s === undefined || !isFinite(s)) return '–';
  s = Math.round(s);
  const d = Math.floor(s / 86400), h = Math.floor(s % 86400 / 3600), m = Math.floor(s % 3600 / 60);
  if (d > 0) return d + 'd ' + h + 'h';
  if (h > 0) return h + 'h ' + m + 'm';
  if (m > 0) return m + 'm ' + (s % 60) + 's';
  return s + 's';
}

function time(ms) {
  return new Date(ms).toISOString().replace('T', ' ').slice(0, 19) + 'Z';
}

function cell(tr, text, cls) {
  const td = document.createElement('td');
  if (cls) td.className = cls;
  if (text instanceof Node) td.appendChild(text); else td.textContent = text;
  tr.appendChild(td);
  return td;
}

function pill(text) {
  const s = document.createElement('span');
  s.className = 'pill ' + text;
  s.textContent = text;
  return s;
}

function minibar(fraction) {
  const outer = document.createElement('div');
  outer.className = 'minibar';
  const inner = document.createElement('div');
  inner.style.width = (100 * Math.min(1, Math.max(0, fraction))).toFixed(1) + '%';
  outer.appendChild(inner);
  return outer;
}

function fillTable(id, rows, draw, emptyText) {
  const body = $(id).tBodies[0];
  const fresh = document.createElement('tbody');
  for (const row of rows) {
    const tr = document.createElement('tr');
    draw(tr, row);
    fresh.appendChild(tr);
  }
  if (rows.length === 0) {
    const tr = document.createElement('tr');
    const td = cell(tr, emptyText, 'empty');
    td.colSpan = $(id).tHead.rows[0].cells.length;
    fresh.appendChild(tr);
  }
  body.replaceWith(fresh);
}

function drawStatus(s) {
  $('prefix').textContent = s.covered_prefix === '1' ? 'nothing covered yet' : '2^' + log2(s.covered_prefix).toFixed(2);
  $('prefix-detail').textContent = '[1, ' + s.covered_prefix + ') searched completely' +
      (s.target !== '0' ? ', heading for ' + s.target + ' (2^' + log2(s.target).toFixed(2) + ')' : '');
  const pct = 100 * s.progress;
  $('progress').setAttribute('aria-valuenow', String(s.progress));
  $('progress-fill').style.width = pct.toFixed(2) + '%';
  $('progress-text').textContent = pct.toFixed(pct < 10 ? 2 : 1) + '%';
  $('eta').textContent = s.units.pending + s.units.leased === 0 ? 'done' : duration(s.eta_seconds);
  $('rate').textContent = compact(s.numbers_per_second);
  $('class-prefix').textContent = s.class_covered_prefix === '1' ? '–' : '2^' + log2(s.class_covered_prefix).toFixed(2);
  $('checked-prefix').textContent = s.checked_prefix === '1' ? '–' : '2^' + log2(s.checked_prefix).toFixed(2);
  $('checked-prefix').title = '[1, ' + s.checked_prefix + ') checked (double check: ' + s.double_check + '): records below it are final';
  $('units').textContent = [s.units.pending, s.units.leased, s.units.finished, s.units.quarantined].join(' / ');
  $('audits-passed').textContent = s.audits.passed;
  $('audits-failed').textContent = s.audits.failed;
  $('audits-pending').textContent = s.audits.pending;
  $('audits-blocked').textContent = s.audits.blocked;
  $('audits-blocked').title = s.audits.blocked > 0
      ? 'checks that no active worker may take: each shares a host, GPU or token with the result\'s finisher (one host: --double-check none)'
      : '';
  $('count-delay').textContent = s.records.delay;
  $('count-class').textContent = s.records.class;
  $('count-candidates').textContent = s.records.delay_candidates + s.records.class_candidates;
  fillTable('submissions', s.submissions, (tr, x) => {
    cell(tr, x.id);
    cell(tr, '[' + x.begin + ', ' + x.end + ')');
    cell(tr, x.kinds + (x.cancelled ? ' (cancelled)' : ''));
    cell(tr, x.priority, 'num');
    cell(tr, x.units_finished + ' / ' + x.units_total, 'num');
    cell(tr, minibar(x.units_total ? x.units_finished / x.units_total : 0));
  }, 'no submissions');
  fillTable('quarantine', s.quarantined_units, (tr, u) => {
    cell(tr, u.id);
    cell(tr, '[' + u.begin + ', ' + u.end + ')');
    cell(tr, u.failures, 'num');
    cell(tr, u.last_error);
  }, 'none');
  const eventsKey = JSON.stringify(s.events);
  if (eventsKey === drawnEvents) return;  // keep the list (and where it is scrolled to)
  drawnEvents = eventsKey;
  const list = document.createElement('ul');
  list.id = 'events';
  for (const e of s.events) {
    const li = document.createElement('li');
    const t = document.createElement('span');
    t.className = 't';
    t.textContent = time(e.at_ms);
    const k = document.createElement('span');
    k.className = 'k-' + e.kind;
    k.textContent = e.kind.replace(/_/g, ' ') + ': ';
    li.append(t, k, document.createTextNode(e.detail));
    list.appendChild(li);
  }
  if (s.events.length === 0) {
    const li = document.createElement('li');
    li.className = 'empty';
    li.textContent = 'nothing yet';
    list.appendChild(li);
  }
  $('events').replaceWith(list);
}

// A worker's largest unit (collatz-worker --max-unit-numbers), a decimal string: 2^k where it is
// a power of two; 'any' for 0 (no limit); '–' before its first lease request since the server started.
function unitLimit(text) {
  if (text === null) return '–';
  const n = BigInt(text);
  if (n === 0n) return 'any';
  return (n & (n - 1n)) === 0n ? '2^' + (n.toString(2).length - 1) : text;
}

function drawWorkers(w) {
  fillTable('workers', w.workers, (tr, x) => {
    cell(tr, x.id);
    cell(tr, x.host);
    cell(tr, x.gpus.length ? x.gpus.join(', ') : '–');
    cell(tr, x.backend);
    cell(tr, pill(x.state));
    cell(tr, x.units_finished, 'num');
    cell(tr, compact(x.numbers_per_second), 'num');
    cell(tr, unitLimit(x.max_unit_numbers), 'num');
    cell(tr, x.last_seen_ms === null ? 'not since restart' : duration((w.time_ms - x.last_seen_ms) / 1000) + ' ago');
    cell(tr, x.flag_reason);
  }, 'no workers registered');
}

// The final records from the largest (the newest) down, then the candidates above the
// covered prefix from the nearest up (the CSV links give both in ascending order).
function drawRecords(id, data, delayFirst) {
  const rows = data.records.map((r) => [r, 'final']).reverse().concat(data.candidates.map((r) => [r, 'candidate']));
  fillTable(id, rows, (tr, [r, status]) => {
    if (delayFirst) { cell(tr, r.delay, 'num'); cell(tr, r.n, 'num'); } else { cell(tr, r.n, 'num'); cell(tr, r.delay, 'num'); }
    cell(tr, pill(status));
  }, 'none yet');
}

function drawChart(t) {
  const box = $('chart');
  const W = Math.max(300, box.clientWidth || 900), H = 200, L = 70, B = 22, T = 8;
  const svg = document.createElementNS(SVG, 'svg');
  svg.setAttribute('viewBox', '0 0 ' + W + ' ' + H);
  svg.setAttribute('id', 'chart-svg');
  // Search units (blue) with stats units (orange) stacked on them.
  const max = Math.max(1, ...t.buckets.map((b) => b.numbers_per_second + b.stats_numbers_per_second));
  const n = t.buckets.length, bw = (W - L) / Math.max(1, n);
  const line = (x1, y1, x2, y2, color) => {
    const l = document.createElementNS(SVG, 'line');
    l.setAttribute('x1', x1); l.setAttribute('y1', y1); l.setAttribute('x2', x2); l.setAttribute('y2', y2);
    l.setAttribute('stroke', color);
    svg.appendChild(l);
  };
  const text = (x, y, s, anchor) => {
    const e = document.createElementNS(SVG, 'text');
    e.setAttribute('x', x); e.setAttribute('y', y); e.setAttribute('font-size', '11'); e.setAttribute('fill', '#6b7385');
    e.setAttribute('text-anchor', anchor);
    e.textContent = s;
    svg.appendChild(e);
  };
  for (let i = 0; i <= 4; ++i) {
    const y = T + (H - B - T) * (1 - i / 4);
    line(L, y, W, y, '#eceef2');
    text(L - 6, y + 4, compact(max * i / 4) + '/s', 'end');
  }
  t.buckets.forEach((b, i) => {
    const bar = (bottom, rate, fill, kind, units) => {
      const h = (H - B - T) * rate / max;
      if (h <= 0) return 0;
      const r = document.createElementNS(SVG, 'rect');
      r.setAttribute('x', L + i * bw + 0.5); r.setAttribute('width', Math.max(1, bw - 1));
      r.setAttribute('y', H - B - bottom - h); r.setAttribute('height', h); r.setAttribute('fill', fill);
      r.setAttribute('class', kind);
      const title = document.createElementNS(SVG, 'title');
      title.textContent = time(b.start_ms) + ': ' + units + ' ' + kind + ' units, ' + compact(rate) + ' numbers/s';
      r.appendChild(title);
      svg.appendChild(r);
      return h;
    };
    const h = bar(0, b.numbers_per_second, '#2f6fdb', 'search', b.units);
    bar(h, b.stats_numbers_per_second, '#d9822b', 'stats', b.stats_units);
    if (i % Math.ceil(n / 6) === 0) text(L + i * bw, H - 6, time(b.start_ms).slice(range === 'week' ? 5 : 11, 16), 'start');
  });
  line(L, H - B, W, H - B, '#b8bec9');
  box.replaceChildren(svg);
  const units = t.buckets.reduce((a, b) => a + b.units, 0);
  const stats = t.buckets.reduce((a, b) => a + b.stats_units, 0);
  $('chart-caption').textContent = units + ' search units' + (stats > 0 ? ' and ' + stats + ' stats units' : '') +
      ' in the last ' + t.range + ', by ' + duration(t.bucket_seconds);
}

async function pollStatus() {
  try {
    const s = await getJson('/api/status');
    drawStatus(s);
    const key = [s.units.finished, s.covered_prefix, s.class_covered_prefix, s.records.delay, s.records.class,
                 s.records.delay_candidates, s.records.class_candidates].join(',');
    if (key !== recordsKey) {
      const [d, c] = await Promise.all([getJson('/api/records?kind=delay'), getJson('/api/records?kind=class')]);
      drawRecords('delay-records', d, false);
      drawRecords('class-records', c, true);
      recordsKey = key;
    }
    drawWorkers(await getJson('/api/workers'));
    $('connection').className = 'ok';
    $('connection').textContent = 'updated ' + time(s.time_ms);
  } catch (e) {
    $('connection').className = 'down';
    $('connection').textContent = 'cannot reach the server (' + e.message + ')';
  }
  setTimeout(pollStatus, POLL_MS);
}

async function pollThroughput() {
  try {
    drawChart(await getJson('/api/throughput?range=' + range));
  } catch (e) {
    $('chart-caption').textContent = 'throughput unavailable (' + e.message + ')';
  }
}

for (const b of document.querySelectorAll('#ranges button')) {
  b.addEventListener('click', () => {
    range = b.dataset.range;
    for (const o of document.querySelectorAll('#ranges button')) o.classList.toggle('on', o === b);
    pollThroughput();
  });
}
pollStatus();
pollThroughput();
setInterval(pollThroughput, THROUGHPUT_MS);
