package version

import (
	"context"
	"fmt"
	"io"
	"runtime"
	"strings"
	"text/tabwriter"

	"github.com/leaselab/leaselab/internal/redisserver"
)

// Module paths of what the harness drives, for their compiled-in versions.
const (
	ToxiproxyModule = "github.com/Shopify/toxiproxy/v2"
	GoRedisModule   = "github.com/redis/go-redis/v9"
)

// Describe writes what this binary is and what it drives, as chaos version
// prints it, one "name  value" line each: leaselab's version (Read: the
// stamp, module version or revision, else Unknown; then the module path and
// where the version came from), the Go toolchain, the redis-server a run
// would spawn (redisServer, "": the one on PATH; one that is missing is
// said, not an error), and the Toxiproxy and go-redis modules compiled in.
func Describe(ctx context.Context, w io.Writer, redisServer string) error {
	leaselab := describeLeaselab(Read())
	redis := "none"
	if v, bin, err := redisserver.Version(ctx, redisServer); err != nil {
		redis += ": " + err.Error()
	} else {
		redis = v + " (" + bin + ")"
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	if strings.HasPrefix(leaselab, Unknown) {
		leaselab += ": " + UnknownWhy
	}
	fmt.Fprintf(tw, "leaselab\t%s\n", leaselab)
	fmt.Fprintf(tw, "go\t%s %s/%s\n", runtime.Version(), runtime.GOOS, runtime.GOARCH)
	fmt.Fprintf(tw, "redis-server\t%s\n", redis)
	fmt.Fprintf(tw, "toxiproxy\t%s (in-process)\n", orUnknown(Dependency(ToxiproxyModule)))
	fmt.Fprintf(tw, "go-redis\t%s\n", orUnknown(Dependency(GoRedisModule)))
	return tw.Flush()
}

// describeLeaselab is chaos version's leaselab line: the version, then in
// parentheses the module path, "set at build" for a stamp, and the revision
// where the version does not already say it.
func describeLeaselab(in Info) string {
	var about []string
	if in.Path != "" {
		about = append(about, in.Path)
	}
	if in.Stamped {
		about = append(about, "set at build")
	}
	if in.Version != "" && in.Revision != "" {
		rev := "revision " + in.Revision
		if in.Modified {
			rev += ", modified"
		}
		about = append(about, rev)
	}
	if len(about) == 0 {
		return in.String()
	}
	return in.String() + " (" + strings.Join(about, ", ") + ")"
}

// orUnknown is s, or says there is no build information to read it from.
func orUnknown(s string) string {
	if s == "" {
		return "unknown (no build information)"
	}
	return s
}
