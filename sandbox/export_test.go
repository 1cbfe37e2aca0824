package sandbox

import "time"

// SetCreateGuardForTest turns the create guard off (or back on) for the
// runs that start until the returned function restores it, so a
// benchmark can time runs without it.
// HoldCreatesForTest has the create guard hold each call it stops for d
// before it carries it out, until the returned function restores it.
func HoldCreatesForTest(d time.Duration) (restore func()) {
	old := createGuardHold.Swap(int64(d))
	return func() { createGuardHold.Store(old) }
}

func SetCreateGuardForTest(on bool) (restore func()) {
	old := createGuardOff
	createGuardOff = !on
	return func() { createGuardOff = old }
}

// LandlockAsListsForTest has the runs that start until the returned
// function restores it send the Landlock lists of before the plan
// (landlock.Ruleset.Compile) instead of the planned rules.
func LandlockAsListsForTest(on bool) (restore func()) {
	old := landlockAsLists
	landlockAsLists = on
	return func() { landlockAsLists = old }
}
