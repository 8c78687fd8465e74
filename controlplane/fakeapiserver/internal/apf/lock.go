package apf

import (
	"context"
	"sync"
	"sync/atomic"
)

// Lock is a mutual exclusion lock whose waiters get it in Queue's order: the thin shell around
// the queue. Unlock hands the lock to the waiter Queue chooses, which holds it from then on, so
// that no goroutine that arrives later takes the turn the queue gave away. Without contention
// it is one compare-and-swap on each side, as a sync.Mutex's, and no allocation. The zero Lock is
// unlocked.
type Lock struct {
	// state is free, held, or contended: held with waiters in q. It goes from free to held and
	// back without mu; every other change is made under mu.
	state atomic.Int32
	mu    sync.Mutex // guards q, and the changes of state to and from contended
	q     Queue[chan struct{}]
}

// Lock's states.
const (
	free int32 = iota
	held
	contended
)

// Lock waits for the lock as a request of class c and takes it, or, if ctx ends first, leaves
// the queue without it and returns ctx's error: in kube-apiserver a request whose context ends
// while it waits in its priority level's queue is ejected and never runs (queueset's
// request.wait, decisionCancel). A request whose turn came as its context ended is treated the
// same way, and hands the turn on: there the request would run with its context ended, and its
// first storage call would fail. An uncontended Lock does not look at ctx, as a request that
// finds a free seat is dispatched at once.
func (l *Lock) Lock(ctx context.Context, c Class) error {
	if l.state.CompareAndSwap(free, held) {
		return nil
	}
	l.mu.Lock()
	for {
		switch l.state.Load() {
		case free:
			if l.state.CompareAndSwap(free, held) {
				l.mu.Unlock()
				return nil
			}
			continue
		case held:
			// The holder's Unlock now takes the slow way, under mu, and finds this waiter.
			if !l.state.CompareAndSwap(held, contended) {
				continue
			}
		}
		break
	}
	// A channel of its own for each wait, not one from a pool shared by every lock: a channel
	// made inside a synctest bubble must never be received from outside it, and a pool would
	// hand one test's channels to the next test's goroutines. Only a contended wait allocates.
	turn := make(chan struct{}, 1)
	l.q.Push(c, turn)
	l.mu.Unlock()
	select {
	case <-turn:
		if err := ctx.Err(); err != nil {
			l.Unlock()
			return err
		}
		return nil
	case <-ctx.Done():
	}
	l.mu.Lock()
	if l.q.Remove(c, turn) {
		if l.q.Len() == 0 {
			l.state.Store(held) // by the holder, whom nobody waits behind any more
		}
		l.mu.Unlock()
		return ctx.Err()
	}
	// Unlock chose this waiter before it could leave: the lock is its own (the turn is in the
	// channel, or about to be). It passes the lock on rather than run.
	l.mu.Unlock()
	<-turn
	l.Unlock()
	return ctx.Err()
}

// Unlock releases the lock, to the waiter that goes next if there is one.
func (l *Lock) Unlock() {
	if l.state.CompareAndSwap(held, free) {
		return
	}
	l.mu.Lock()
	if l.state.Load() != contended {
		l.mu.Unlock()
		panic("apf: unlock of an unlocked Lock")
	}
	turn, _ := l.q.Pop()
	if l.q.Len() == 0 {
		l.state.Store(held) // by the waiter handed the lock, whom nobody waits behind
	}
	l.mu.Unlock()
	turn <- struct{}{}
}

// TryLock takes the lock if nobody holds it, and reports whether it did: a test's way to see
// whether the lock is held without waiting for it. The server itself never tries the lock; a
// request waits for its turn.
func (l *Lock) TryLock() bool {
	return l.state.CompareAndSwap(free, held)
}

// Waiting is the number of goroutines waiting for the lock: a test's way to know that the
// requests it started are queued before it lets them go.
func (l *Lock) Waiting() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.q.Len()
}
