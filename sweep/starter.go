package sweep

import (
	"encoding/json"
	"fmt"
	"os"

	"github.com/leaselab/leaselab/scenarios"
)

// Starter is the starter suite that keeps checking an advice in CI: the
// recommended timings, the constraints as limits for the failure modes of
// the envelope (the others expect the bound calculator's worst case), and
// the envelope's latency, pause and suspend as the faults' sizes.
func (a Advice) Starter() scenarios.StarterOptions {
	modes, size := envelopeModes(a.Envelope.withDefaults())
	o := scenarios.StarterOptions{
		Params:  a.Params,
		Limits:  map[string]string{"max_gap": dur(a.Constraints.MaxGap)},
		Within:  modes,
		Latency: size.Latency,
		Pause:   size.Pause,
		Suspend: a.Envelope.MaxSuspend,
	}
	if a.Constraints.MaxOverlap != NoLimit {
		o.Limits["max_overlap"] = dur(a.Constraints.MaxOverlap)
	}
	if a.Constraints.MaxStale != NoLimit {
		o.Limits["stale_leadership"] = dur(a.Constraints.MaxStale)
	}
	return o
}

// ReadAdvice reads the advice.json that chaos advise --out writes (what
// WriteAdvice writes), refusing a file that is not one: JSON of another
// shape, or an advice without constraints.
func ReadAdvice(path string) (Advice, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return Advice{}, fmt.Errorf("reading the advice: %w", err)
	}
	var adv Advice
	if err := json.Unmarshal(b, &adv); err != nil {
		return Advice{}, fmt.Errorf("%s is not the advice.json of chaos advise: %w", path, err)
	}
	if adv.Constraints.MaxGap <= 0 {
		return Advice{}, fmt.Errorf("%s has no constraints: is it the advice.json of chaos advise?", path)
	}
	return adv, nil
}
