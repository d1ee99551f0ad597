#!/usr/bin/env bash
# Builds the bench's C# contestant (bench/contestants/dotnet/Contestant.cs,
# zoolock's .NET library under Mono; it speaks bench/contestants/PROTOCOL.md)
# with the native library and the ZooLock assembly into target/bench/dotnet/:
#   ZooLockBenchContestant.exe  ZooLock.dll  libzoolock_ffi.so
# Run it with `mono target/bench/dotnet/ZooLockBenchContestant.exe --connect … …`.
# Only what is out of date is rebuilt; prints the contestant's path last.
set -euo pipefail
cd "$(dirname "$0")/.."
exec scripts/build-dotnet-program.sh target/bench/dotnet ZooLockBenchContestant.exe bench/contestants/dotnet/Contestant.cs
