package main

import (
	"context"
	"flag"
	"fmt"
	"io"

	"github.com/leaselab/leaselab/internal/version"
)

const versionUsage = `Usage: chaos version [--redis-server PATH]

Prints what this chaos is and what it drives: leaselab's version (stamped at
build, else the module version the go command recorded, else the revision;
"unknown version" when the build recorded none), the Go toolchain it was built with,
the redis-server that run and suite would spawn (its --version), and the
Toxiproxy and go-redis modules compiled in (Toxiproxy runs in-process).
A missing redis-server is reported, not an error: the virtual backend and
--redis-addr need none.

Examples:
  chaos version
  chaos version --redis-server /opt/redis/bin/redis-server
`

func cmdVersion(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("version", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { fmt.Fprint(stderr, versionUsage); fs.PrintDefaults() }
	redisServer := fs.String("redis-server", "", "the redis-server binary run and suite would spawn (default: found on PATH)")
	if err := parseFlags(fs, args); err != nil {
		return flagErr(err)
	}
	if fs.NArg() > 0 {
		return usageErr("version takes no arguments")
	}
	return version.Describe(ctx, stdout, *redisServer)
}
