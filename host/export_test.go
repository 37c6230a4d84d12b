package host

// SetSnapshotFloor sets the log size under which no snapshot is written,
// for tests; the returned function puts the default back.
func SetSnapshotFloor(n int) (restore func()) {
	old := snapshotFloor
	snapshotFloor = n
	return func() { snapshotFloor = old }
}
