package fieldmanager

import (
	"sync"
	"testing"
)

// TestSwitch wants a switch on until it is turned off, and turned back on, with no data race
// between a writer and readers (go test -race).
func TestSwitch(t *testing.T) {
	var s Switch
	if !s.On() {
		t.Fatal("zero Switch is off, want on")
	}
	s.Set(false)
	if s.On() {
		t.Fatal("Switch after Set(false) is on, want off")
	}
	var wg sync.WaitGroup
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 100 {
				_ = s.On()
			}
		}()
	}
	for i := range 100 {
		s.Set(i%2 == 1)
	}
	wg.Wait()
	if !s.On() {
		t.Fatal("Switch after Set(true) is off, want on")
	}
}
