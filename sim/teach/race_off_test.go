//go:build !race

package teach

// raceEnabled is true when the tests are built with -race (race_on_test.go has the other value).
const raceEnabled = false
