package sandbox

// LaneCPUFor is the CPU time a lane's helper is taken to need for a job
// (cpuFor), so that a test sets a limit just above it.
var LaneCPUFor = cpuFor
