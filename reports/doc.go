// Package reports renders a simulator run (a *verdict.Result) into the failover
// reports an engineer attaches to a design review: a self-contained HTML page,
// the same findings in Markdown, the result as JSON (re-renderable with
// ReadResult), the event timeline as JSON lines, a timeline plot (SVG and
// PNG), and JUnit XML for CI. WriteSuite adds an index over many runs.
//
// Rendering is pure and offline: nothing here touches the network, the HTML
// references no external script, style, font or image, and the plot's fonts
// come embedded in gonum/plot. Every finding is phrased as what was measured
// beside what the spec or the bound calculator says, never the other way
// round, so a reader can tell a broken claim from a broken harness.
//
// Times in the reports are offsets from the start of the run on the
// harness's monotonic clock (the only clock the simulator trusts), printed
// as seconds with millisecond precision; durations are printed the way a
// person would say them ("250ms", "1.234s").
package reports
