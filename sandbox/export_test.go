package sandbox

// SetCreateGuardForTest turns the create guard off (or back on) for the
// runs that start until the returned function restores it, so a
// benchmark can time runs without it.
func SetCreateGuardForTest(on bool) (restore func()) {
	old := createGuardOff
	createGuardOff = !on
	return func() { createGuardOff = old }
}
