// collatz-worker, the production binary: no test flags (docs/WORKER.md).
#include "worker/worker_app.h"

int main(int argc, char** argv) { return collatz::worker::WorkerMain(argc, argv); }
