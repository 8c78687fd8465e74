//go:build race

package replay

// raceEnabled is true when the tests are built with -race (race_off_test.go has the other value).
const raceEnabled = true
