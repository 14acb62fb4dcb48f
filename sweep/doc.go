// Package sweep runs a scenario over a grid of timing parameters and fault
// sizes, many seeds per cell, on the deterministic virtual backend
// (virtual.Run), and turns the runs into per-cell statistics, a safe region,
// and written reports (result.json, cells.csv, heatmaps, an HTML page). It
// also answers the inverse question (Advise): which timings meet a user's
// constraints under a platform's fault envelope, searched analytically with
// bounds.PredictMode and confirmed by a virtual sweep.
//
// Determinism: a sweep's Result depends only on its Grid (and the options
// that name a shard), never on scheduling: runs execute on a worker pool,
// each writes its slot of a pre-sized table, and statistics are computed in
// grid order once every run is in. Result.JSON is therefore byte-identical
// for the same input, whatever GOMAXPROCS, and Merge of the shards of a
// sweep equals the unsharded sweep byte for byte.
//
// Seeds runs one scenario over many seeds into a reports.Distribution (chaos
// run --runs N).
//
// Package sweep is orchestration only: it imports model, sim, virtual,
// scenarios and reports, and nothing of the real backend.
package sweep
