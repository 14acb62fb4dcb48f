// Package verdict judges a run: each of its expectations (a limit on a
// metric, a fixed duration, an expression over the run's parameters, or
// "predicted") against the analysis, within the measurement's uncertainty
// and the stalls a loaded machine caused, to pass, fail or unknown
// (Evaluate); and Result, everything a run produced, as stored in
// result.json. It is model's last stage: it imports the others and nothing
// of model imports it.
//
// A verdict is never firmer than what was measured: a limit inside the
// measurement's uncertainty, or exceeded only by the harness's own stalls,
// is unknown, never a fail.
package verdict
