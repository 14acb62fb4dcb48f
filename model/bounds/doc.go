// Package bounds predicts the analytic worst case of each failure mode a
// run's faults put the election in: the longest gap, overlap, stale
// leadership and failover, and the duplicate chores, each with the formula
// it was taken from (Prediction). It is model's third stage: it reads
// model's vocabulary and the analysis (which faults applied, to whom, when),
// and model/verdict compares against what it returns.
//
// Predict composes every term (faults in force together, chained
// overlaps, unseen acquires, a client's own guard), so that the predictions
// a run stores are the limits its "predicted" expectations are held to.
// A bound is a worst case only where a search of the schedule cannot break
// it; chaos explore and chaos prove search it.
package bounds
