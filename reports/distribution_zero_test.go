package reports

import (
	"bytes"
	"image/png"
	"strings"
	"testing"
	"time"

	"github.com/leaselab/leaselab/model"
)

// A metric every run measured as 0 (no gap in 100 runs) is drawn as the
// spike it is, on a second of axis, with a title that says so: not as a
// full-height block of the gap's red, as if every run had a large gap.
func TestDistributionPlotOfAllZeros(t *testing.T) {
	d := NewDistribution(model.Scenario{Name: "x", Seed: 1}, "virtual", 100, func(seed int64, b string) string { return b })
	for s := int64(1); s <= 100; s++ {
		d.Add(distResult(s, time.Second+time.Duration(s)*time.Millisecond, model.Pass))
	}
	d.Finish()
	_, pngBytes, err := PlotDistribution(d)
	if err != nil {
		t.Fatal(err)
	}
	img, err := png.Decode(bytes.NewReader(pngBytes))
	if err != nil {
		t.Fatal(err)
	}
	gap := lighten(colGap, 0.25)
	gr, gg, gb, _ := gap.RGBA()
	n, all := 0, 0
	b := img.Bounds()
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			r, g, bl, _ := img.At(x, y).RGBA()
			all++
			if r == gr && g == gg && bl == gb {
				n++
			}
		}
	}
	if frac := float64(n) / float64(all); frac > 0.01 {
		t.Errorf("%.1f%% of the histograms is the gap's colour for a gap of 0 in every run", 100*frac)
	}
	found := false
	for _, m := range d.Metrics {
		if m.Name == "max_gap" && len(m.Histogram) == 1 {
			found = true
		}
	}
	if !found || !strings.Contains(string(svgOf(t, d)), "0s in all 100 runs") {
		t.Errorf("the all-zero gap's panel does not say so")
	}
}

func svgOf(t *testing.T, d *Distribution) []byte {
	svg, _, err := PlotDistribution(d)
	if err != nil {
		t.Fatal(err)
	}
	return svg
}
