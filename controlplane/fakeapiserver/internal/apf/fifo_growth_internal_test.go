package apf

import "testing"

// TestFIFONeverEmptiedStaysBounded: a queue that always has a waiter (a busy lock whose exempt
// waiters never all leave at once) must not keep every waiter it ever held.
func TestFIFONeverEmptiedStaysBounded(t *testing.T) {
	var q Queue[int]
	q.Push(Class{}, 0)
	q.Push(Class{}, 1)
	for i := range 100000 {
		q.Pop()
		q.Push(Class{}, i+2)
	}
	if c := cap(q.exempt.items); c > 1024 {
		t.Errorf("exempt fifo holds 2 waiters in an array of %d", c)
	}
	var l Queue[int]
	c := Class{Level: System, Flow: Flow{"system-nodes", "n1"}}
	l.Push(c, 0)
	l.Push(c, 1)
	for i := range 100000 {
		l.Pop()
		l.Push(c, i+2)
	}
	if c := cap(l.levels[System].flows[c.Flow].waiters.items); c > 1024 {
		t.Errorf("a flow's fifo holds 2 waiters in an array of %d", c)
	}
}

// TestFIFOKeepsOrderAcrossCompaction: the waiters come out first come, first served however
// the pops and pushes interleave with the moves to the front of the array, and a flow that
// emptied after a burst does not keep the burst's array on the free list.
func TestFIFOKeepsOrderAcrossCompaction(t *testing.T) {
	tests := []struct {
		name         string
		burst, steps int
	}{
		{"small", 3, 1000},
		{"at the threshold", compactMin, 1000},
		{"burst", 5000, 20000},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var f fifo[int]
			next, want := 0, 0
			for range tt.burst {
				f.push(waiter[int]{w: next})
				next++
			}
			for i := range tt.steps {
				// Two pops and one push, then one pop and two pushes: the fifo drains and refills.
				pops := 1 + i%2
				for range pops {
					if f.len() == 0 {
						break
					}
					if got := f.pop().w; got != want {
						t.Fatalf("step %d: popped %d, want %d", i, got, want)
					}
					want++
				}
				for range 3 - pops {
					f.push(waiter[int]{w: next})
					next++
				}
			}
			for f.len() > 0 {
				if got := f.pop().w; got != want {
					t.Fatalf("drain: popped %d, want %d", got, want)
				}
				want++
			}
			if want != next {
				t.Errorf("popped %d waiters, pushed %d", want, next)
			}
		})
	}

	var q Queue[int]
	c := Class{Level: System, Flow: Flow{"system-nodes", "n1"}}
	for i := range 1000 {
		q.Push(c, i)
	}
	for q.Len() > 0 {
		q.Pop()
	}
	for _, f := range q.free {
		if cap(f.waiters.items) > keptCap {
			t.Errorf("an emptied flow keeps an array of %d on the free list", cap(f.waiters.items))
		}
	}
	if len(q.free) == 0 {
		t.Error("the emptied flow is not on the free list")
	}
}
