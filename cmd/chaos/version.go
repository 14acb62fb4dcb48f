package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"runtime"
	"text/tabwriter"

	"github.com/leaselab/leaselab/internal/redisserver"
	"github.com/leaselab/leaselab/internal/version"
)

const versionUsage = `Usage: chaos version [--redis-server PATH]

Prints what this chaos is and what it drives: leaselab's module version (and
the revision of a build from a checkout), the Go toolchain it was built with,
the redis-server that run and suite would spawn (its --version), and the
Toxiproxy and go-redis modules compiled in (Toxiproxy runs in-process).
A missing redis-server is reported, not an error: the virtual backend and
--redis-addr need none.

Examples:
  chaos version
  chaos version --redis-server /opt/redis/bin/redis-server
`

// Module paths of what the harness drives, for their compiled-in versions.
const (
	toxiproxyModule = "github.com/Shopify/toxiproxy/v2"
	goRedisModule   = "github.com/redis/go-redis/v9"
)

func cmdVersion(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("version", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { fmt.Fprint(stderr, versionUsage); fs.PrintDefaults() }
	redisServer := fs.String("redis-server", "", "the redis-server binary run and suite would spawn (default: found on PATH)")
	if err := fs.Parse(args); err != nil {
		return flagErr(err)
	}
	if fs.NArg() > 0 {
		return usageErr("version takes no arguments")
	}
	path, mod := version.Module()
	leaselab := orUnknown(mod)
	if path != "" {
		leaselab += " (" + path
		if rev, modified := version.Revision(); rev != "" {
			leaselab += ", revision " + rev
			if modified {
				leaselab += ", modified"
			}
		}
		leaselab += ")"
	}
	redis := "none"
	if v, bin, err := redisserver.Version(ctx, *redisServer); err != nil {
		redis += ": " + err.Error()
	} else {
		redis = v + " (" + bin + ")"
	}
	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "leaselab\t%s\n", leaselab)
	fmt.Fprintf(tw, "go\t%s %s/%s\n", runtime.Version(), runtime.GOOS, runtime.GOARCH)
	fmt.Fprintf(tw, "redis-server\t%s\n", redis)
	fmt.Fprintf(tw, "toxiproxy\t%s (in-process)\n", orUnknown(version.Dependency(toxiproxyModule)))
	fmt.Fprintf(tw, "go-redis\t%s\n", orUnknown(version.Dependency(goRedisModule)))
	return tw.Flush()
}

func orUnknown(s string) string {
	if s == "" {
		return "unknown (no build information)"
	}
	return s
}
