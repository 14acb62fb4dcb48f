// Package faulty is what an instance under test runs on in-process that a
// chaos harness bends while it runs: its clock (Clock: drift, wall-clock
// jumps, stalls, freezes) and its connections to Redis (Gate: held, killed,
// jittered). The goroutine instances of sim/real run on both, the Go agent
// of sim/process/ownagent on a Clock; neither backend imports the other for
// them.
package faulty
