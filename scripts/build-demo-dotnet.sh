#!/usr/bin/env bash
# Builds the demo's C# worker (demo/workers/dotnet/Worker.cs) with the native
# library and the ZooLock assembly into target/demo/dotnet/:
#   ZooLockDemoWorker.exe  ZooLock.dll  libzoolock_ffi.so
# Run it with `mono target/demo/dotnet/ZooLockDemoWorker.exe --connect … …`.
# Only what is out of date is rebuilt; prints the worker's path last.
set -euo pipefail
cd "$(dirname "$0")/.."
exec scripts/build-dotnet-program.sh target/demo/dotnet ZooLockDemoWorker.exe demo/workers/dotnet/Worker.cs
