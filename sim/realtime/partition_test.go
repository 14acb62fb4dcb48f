package realtime

import (
	"testing"

	toxiclient "github.com/Shopify/toxiproxy/v2/client"

	"github.com/leaselab/leaselab/model"
	"github.com/leaselab/leaselab/sim/env/envtest"
)

// TestOverlappingPartitionsOnOneProxy: two partitions of one mode on one
// instance are two faults, as the virtual backend counts them: the second
// is added beside the first, and the first to heal leaves the other in
// place — a refuse heal re-enables the proxy only when the last one heals,
// a blackhole heal removes only its own toxics.
func TestOverlappingPartitionsOnOneProxy(t *testing.T) {
	environ := envtest.Embedded(t)
	proxy, err := environ.Toxiproxy.CreateProxy("leaselab-overlap", "127.0.0.1:0", environ.ProxyUpstream)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = proxy.Delete() }()
	fw := &faultWorld{proxies: [][]*toxiclient.Proxy{{proxy}}}
	// state reads the proxy back from Toxiproxy: enabled, and its toxics.
	state := func() (bool, int) {
		t.Helper()
		p, err := environ.Toxiproxy.Proxy(proxy.Name)
		if err != nil {
			t.Fatal(err)
		}
		tx, err := p.Toxics()
		if err != nil {
			t.Fatal(err)
		}
		return p.Enabled, len(tx)
	}
	step := func(what string, fault int, mode string, on bool, enabled bool, toxics int) {
		t.Helper()
		if err := fw.Partition(0, fault, mode, on); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		if e, n := state(); e != enabled || n != toxics {
			t.Errorf("after %s: proxy enabled %v with %d toxics, want enabled %v with %d", what, e, n, enabled, toxics)
		}
	}
	step("refuse 0 on", 0, model.PartitionRefuse, true, false, 0)
	step("refuse 1 on", 1, model.PartitionRefuse, true, false, 0)
	step("refuse 1 healed", 1, model.PartitionRefuse, false, false, 0)
	step("refuse 0 healed", 0, model.PartitionRefuse, false, true, 0)

	step("blackhole 2 on", 2, model.PartitionBlackhole, true, true, 2)
	step("blackhole 3 on", 3, model.PartitionBlackhole, true, true, 4)
	step("blackhole-replies 4 on", 4, model.PartitionBlackholeReplies, true, true, 5)
	step("blackhole 3 healed", 3, model.PartitionBlackhole, false, true, 3)
	step("blackhole 2 healed", 2, model.PartitionBlackhole, false, true, 1)
	step("blackhole-replies 4 healed", 4, model.PartitionBlackholeReplies, false, true, 0)
}
