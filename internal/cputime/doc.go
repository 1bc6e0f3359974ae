// Package cputime reads the process's CPU time, for benchmarks that report
// what an operation costs in CPU beside its wall-clock time: on a loaded
// machine the wall-clock time grows with the load, the CPU time much less,
// and the CPU time of a parallel operation against one core's says what
// the parallelism costs.
package cputime
