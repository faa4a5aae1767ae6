#!/usr/bin/env bash
# Stops the brokers started from this installation (SIGTERM: a clean, controlled shutdown) and waits for them to exit.
exec "$(dirname "${BASH_SOURCE[0]}")/twinlog-stop.sh" io.twinlog.server.Main "Twinlog broker"
