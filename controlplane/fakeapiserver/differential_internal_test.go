package fakeapiserver

// differentialSeeds is how many random sequences a test that compares the field manager's
// shortcuts with the library's path runs: n, or a tenth of n (at least two) under the race
// detector. Those comparisons write from the test's own goroutine, one write after the other:
// what the race detector can find in them (the store's lock, the watchers' goroutines) the first
// sequences already run, while they took most of the package's time under -race. Each such test
// also counts how many writes its shortcut served, so that a comparison that never reaches the
// shortcut fails; the first sequences serve fewer than the whole set's share, so the count is
// checked in the plain suite, which runs all n.
func differentialSeeds(n int64) int64 {
	if !raceEnabled {
		return n
	}
	return max(2, n/10)
}

// pureUnderRace is why a test of functions that only read their arguments and answer (no server,
// no store, no goroutine), which takes tens of seconds under -race, skips there: the race
// detector needs a second goroutine to find anything; the plain suite runs it.
const pureUnderRace = "pure functions on the test's goroutine, nothing for the race detector"
