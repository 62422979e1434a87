//go:build !linux

package sandbox

// laneHelper exists on Linux only: no job starts here.
type laneHelper struct{}

func (l *Lane) retire() {}

func (l *Lane) warm(bool) {}
