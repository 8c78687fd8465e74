package apf

import "sync"

// Lock is a mutual exclusion lock whose waiters get it in Queue's order: the thin shell around
// the queue. Unlock hands the lock to the waiter Queue chooses, which holds it from then on, so
// that no goroutine that arrives later takes the turn the queue gave away. Without contention
// it is a sync.Mutex's Lock and Unlock on each side and no allocation. The zero Lock is unlocked.
type Lock struct {
	mu   sync.Mutex // guards held and q
	held bool
	q    Queue[chan struct{}]
}

// turns are the channels waiters receive their turn on, reused: a waiter that was handed the
// lock has drained its channel.
var turns = sync.Pool{New: func() any { return make(chan struct{}, 1) }}

// Lock waits for the lock as a request of class c and takes it.
func (l *Lock) Lock(c Class) {
	l.mu.Lock()
	if !l.held {
		l.held = true
		l.mu.Unlock()
		return
	}
	turn := turns.Get().(chan struct{})
	l.q.Push(c, turn)
	l.mu.Unlock()
	<-turn
	turns.Put(turn)
}

// Unlock releases the lock, to the waiter that goes next if there is one.
func (l *Lock) Unlock() {
	l.mu.Lock()
	turn, ok := l.q.Pop()
	if !ok {
		if !l.held {
			l.mu.Unlock()
			panic("apf: unlock of an unlocked Lock")
		}
		l.held = false
	}
	l.mu.Unlock()
	if ok {
		turn <- struct{}{}
	}
}

// TryLock takes the lock if nobody holds it or waits for it, and reports whether it did.
func (l *Lock) TryLock() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.held {
		return false
	}
	l.held = true
	return true
}

// Waiting is the number of goroutines waiting for the lock: a test's way to know that the
// requests it started are queued before it lets them go.
func (l *Lock) Waiting() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.q.Len()
}
