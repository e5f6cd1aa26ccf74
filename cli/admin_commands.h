// collatzctl's client commands for a running collatz-server: submit, cancel, requeue, status,
// import, export, backup, server-records and stats-fetch here; workers, unflag and tokens in
// fleet_commands.h. Each talks gRPC (collatz.v1.Admin, through admin_rpc.h); the server
// address comes from --server or $COLLATZ_SERVER, the token from --token-file or
// $COLLATZ_TOKEN. gRPC status codes become clear messages; exit codes as in exit_codes.h.
#pragma once

#include <CLI/CLI.hpp>
#include <string>

namespace collatz::cli {

// Adds the commands to `app`. Each runs from its CLI11 callback once its flags are parsed
// and ends the process with its exit code.
void RegisterAdminCommands(CLI::App& app);

// Whether `name` is one of the commands above (for main's unknown-command message).
bool IsAdminCommand(const std::string& name);

}  // namespace collatz::cli
