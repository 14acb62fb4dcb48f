package process

import (
	"github.com/leaselab/leaselab/model/bounds"

	"cmp"
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/leaselab/leaselab/agent"
	"github.com/leaselab/leaselab/model"
)

// clientBook keeps the Redis client the run's agents declare in their
// hellos (agent.Client): the predictions follow the first one, and an
// agent that declares another (or none, after one did) is a harness error
// naming both, since one run is predicted for one client.
type clientBook struct {
	mu      sync.Mutex
	first   *agent.Client
	firstBy string
	seen    bool // some hello was noted
	errs    []string
}

// note notes the client of a hello of the agent name.
func (b *clientBook) note(name string, h agent.Hello) {
	if b == nil {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if !b.seen {
		b.seen, b.first, b.firstBy = true, h.Client, name
		return
	}
	if same(b.first, h.Client) {
		return
	}
	b.errs = append(b.errs, fmt.Sprintf("%s declares the client %s, and %s declared %s: the predictions follow the first",
		name, clientText(h.Client), b.firstBy, clientText(b.first)))
}

// same reports whether two declarations say the same.
func same(a, b *agent.Client) bool {
	ja, _ := json.Marshal(a)
	jb, _ := json.Marshal(b)
	return string(ja) == string(jb)
}

func clientText(c *agent.Client) string {
	if c == nil {
		return "none"
	}
	j, _ := json.Marshal(c)
	return string(j)
}

// declared returns the run's declared client as the model takes it (nil:
// none declared), and the errors of agents that declared another.
func (b *clientBook) declared() (*bounds.DeclaredClient, []string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.first == nil {
		return nil, b.errs
	}
	return declaredClient(*b.first), b.errs
}

// declaredClient is a declaration as the model's client options: a read
// timeout of 0 (none) is -1, as are 0 retries; another library's per-call
// deadline is honoured (ContextTimeoutEnabled).
func declaredClient(c agent.Client) *bounds.DeclaredClient {
	p := model.ClientParams{
		Library:               c.Library,
		ReadTimeout:           c.ReadTimeout(),
		MaxRetries:            c.Retries,
		ContextTimeoutEnabled: c.ContextTimeoutEnabled,
		PoolSize:              c.PoolSize,
		ValidityMargin:        time.Duration(c.ValidityMarginMS * float64(time.Millisecond)),
	}
	if p.ReadTimeout <= 0 {
		p.ReadTimeout = -1
	}
	p.WriteTimeout = p.ReadTimeout
	if p.MaxRetries == 0 {
		p.MaxRetries = -1
	}
	op := time.Duration(c.OpTimeoutMS * float64(time.Millisecond))
	if !c.IsGoRedis() {
		p.RetryOnTimeout = c.RetryOnTimeout
		p.RetryBackoff = time.Duration(c.RetryBackoffMS * float64(time.Millisecond))
		p.HandshakeRoundTrips = c.HandshakeRoundTrips
		p.Queues = c.QueuesWhileDisconnected
		p.ContextTimeoutEnabled = op > 0
	}
	return &bounds.DeclaredClient{Client: p, OpTimeout: op}
}

// logBook keeps the paths of the run's agent logs (Backend.LogDir), for
// the reports to link.
type logBook struct {
	mu    sync.Mutex
	paths []string
}

// add notes a log the run keeps.
func (b *logBook) add(path string) {
	if b == nil {
		return
	}
	b.mu.Lock()
	b.paths = append(b.paths, path)
	b.mu.Unlock()
}

// sorted returns the logs, by instance and incarnation as their names
// sort (instance-I.N.log, numerically).
func (b *logBook) sorted() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	out := slices.Clone(b.paths)
	slices.SortFunc(out, func(x, y string) int {
		var xi, xn, yi, yn int
		_, _ = fmt.Sscanf(filepath.Base(x), "instance-%d.%d.log", &xi, &xn)
		_, _ = fmt.Sscanf(filepath.Base(y), "instance-%d.%d.log", &yi, &yn)
		return cmp.Or(cmp.Compare(xi, yi), cmp.Compare(xn, yn), strings.Compare(x, y))
	})
	return out
}
