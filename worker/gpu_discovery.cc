#include "worker/gpu_discovery.h"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <sstream>

namespace collatz::worker {
namespace {

std::string Lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

std::string Trim(const std::string& s) {
  size_t a = 0, b = s.size();
  while (a < b && std::isspace(static_cast<unsigned char>(s[a]))) ++a;
  while (b > a && std::isspace(static_cast<unsigned char>(s[b - 1]))) --b;
  return s.substr(a, b - a);
}

bool AllDigits(const std::string& s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

}  // namespace

std::string FormatGpuUuid(const unsigned char b[16]) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", b[0], b[1],
                b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13], b[14], b[15]);
  return buf;
}

Status SelectGpus(const std::string& selection, const std::vector<GpuInfo>& available, std::vector<GpuInfo>* out) {
  out->clear();
  const std::string sel = Trim(selection);
  if (sel.empty() || sel == "all") {
    *out = available;
    return Status::Ok();
  }
  std::stringstream ss(sel);
  std::string item;
  std::vector<int> chosen;
  while (std::getline(ss, item, ',')) {
    item = Trim(item);
    if (item.empty()) return Status::InvalidArgument("--gpus: empty entry in \"" + selection + "\"");
    int found = -1;
    if (AllDigits(item)) {
      const long index = std::strtol(item.c_str(), nullptr, 10);
      for (size_t i = 0; i < available.size(); ++i) {
        if (available[i].index == index) found = static_cast<int>(i);
      }
      if (found < 0) {
        return Status::InvalidArgument("--gpus: no GPU with index " + item + " (" + std::to_string(available.size()) +
                                       " visible; CUDA_VISIBLE_DEVICES renumbers them from 0)");
      }
    } else {
      std::string want = Lower(item);
      if (want.rfind("gpu-", 0) != 0) want = "gpu-" + want;
      int matches = 0;
      for (size_t i = 0; i < available.size(); ++i) {
        if (Lower(available[i].uuid).rfind(want, 0) == 0) {
          found = static_cast<int>(i);
          ++matches;
        }
      }
      if (matches == 0) return Status::InvalidArgument("--gpus: no visible GPU has UUID " + item);
      if (matches > 1) return Status::InvalidArgument("--gpus: UUID prefix " + item + " matches several GPUs");
    }
    if (std::find(chosen.begin(), chosen.end(), found) != chosen.end()) {
      return Status::InvalidArgument("--gpus: GPU " + item + " is named twice");
    }
    chosen.push_back(found);
  }
  for (int i : chosen) out->push_back(available[i]);
  return Status::Ok();
}

}  // namespace collatz::worker
