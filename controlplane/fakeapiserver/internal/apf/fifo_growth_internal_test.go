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
