package bounds

import (
	"github.com/leaselab/leaselab/model"

	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestEveryKindIsComplete is what makes a new kind one file: a kind that
// forgets a part of its spec, or the reason it has none, fails here
// rather than falling back to a default somewhere (a grey plot, a starter
// suite without it, an advise that cannot confirm its mode).
func TestEveryKindIsComplete(t *testing.T) {
	colours := map[uint32]model.FaultKind{}
	for _, k := range model.Kinds() {
		t.Run(string(k.Kind), func(t *testing.T) {
			name := strings.ReplaceAll(string(k.Kind), "-", "_")
			for _, file := range []string{filepath.Join("..", "kind_"+name+".go"), filepath.Join("..", "..", "sim", "faults", name+".go")} {
				if _, err := os.Stat(file); err != nil {
					t.Errorf("the kind's file: %v", err)
				}
			}
			if k.Doc == "" {
				t.Error("Doc is empty")
			}
			if k.Colour == 0 {
				t.Error("no Colour: the plot would draw it grey")
			} else if o, ok := colours[k.Colour]; ok {
				t.Errorf("Colour %06x is %s's too", k.Colour, o)
			}
			colours[k.Colour] = k.Kind
			for _, c := range []struct {
				part   string
				has    bool
				reason string
			}{
				{"Starter", k.Starter != nil, k.NoStarter},
				{"Axes", len(k.Axes) > 0, k.NoAxes},
				{"ModeFault", k.ModeFault != nil, k.NoModeFault},
			} {
				switch {
				case !c.has && c.reason == "":
					t.Errorf("no %s, and No%s does not say why", c.part, c.part)
				case c.has && c.reason != "":
					t.Errorf("a %s and a reason for having none (%q)", c.part, c.reason)
				}
			}
			if k.ModeFault != nil && len(k.Modes) == 0 {
				t.Error("a ModeFault but no Modes for it to exercise")
			}
			for _, m := range k.Modes {
				if !slices.Contains(Modes, m) {
					t.Errorf("mode %q is not one of Modes", m)
				}
			}
			if len(k.ModeValues) > 0 && !slices.Contains(k.Params, "mode") {
				t.Error("ModeValues but no parameter mode")
			}
			if k.Spans && !k.OnRedis {
				t.Error("Spans applies only to a kind on Redis")
			}
			if ts := k.Needs.Topologies; ts != nil && k.TopologyProblem == nil {
				t.Error("Needs.Topologies without a topologyProblem to say why")
			}
		})
	}
}
