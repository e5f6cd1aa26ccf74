// collatzctl's commands for the fleet on a running collatz-server: its workers (workers),
// their flags (unflag) and the access tokens they connect with (tokens). Each adds one
// command to `app`; RegisterAdminCommands calls them so that --help lists the commands
// in their usual order.
#pragma once

#include <CLI/CLI.hpp>

namespace collatz::cli {

void AddUnflagCommand(CLI::App& app);
void AddWorkersCommand(CLI::App& app);
void AddTokensCommand(CLI::App& app);

}  // namespace collatz::cli
