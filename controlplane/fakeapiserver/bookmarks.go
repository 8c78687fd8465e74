package fakeapiserver

import (
	"context"
	"time"

	"k8s.io/utils/clock"
)

// A watch with allowWatchBookmarks gets a BOOKMARK about every minute, carrying the latest
// resource version, and one two seconds before its timeout, as kube-apiserver's cacher sends them
// (its bookmarkFrequency and the pre-timeout bookmark of cacheWatcher.nextBookmarkTime). Clients
// resume from a bookmark's version after a watch ends, instead of from an older one the history
// may have dropped. The times are on the server's clock.

// bookmarkFrequency is how often the cacher sends each watcher a bookmark.
const bookmarkFrequency = time.Minute

// bookmarker times the bookmarks of one watch. Its zero value (no clock, or no bookmarks asked
// for) never fires.
type bookmarker struct {
	clock    clock.Clock
	deadline time.Time // zero without timeoutSeconds
	timer    clock.Timer
	// pending is set when a bookmark is due and not yet sent.
	pending bool
}

func (s *Server) newBookmarker(opts listOptions) *bookmarker {
	b := &bookmarker{}
	c, ok := s.clock.(clock.Clock)
	if !opts.bookmarks || !ok {
		return b
	}
	b.clock = c
	if opts.timeout > 0 {
		b.deadline = c.Now().Add(opts.timeout)
	}
	b.arm()
	return b
}

// arm starts the timer for the next bookmark: a minute from now, or two seconds before the
// deadline if that is sooner, and none once that is past.
func (b *bookmarker) arm() {
	now := b.clock.Now()
	at := now.Add(bookmarkFrequency)
	if !b.deadline.IsZero() {
		if pre := b.deadline.Add(-2 * time.Second); pre.Before(at) {
			at = pre
		}
		if !at.After(now) {
			b.timer = nil // the pre-timeout bookmark went out
			return
		}
	}
	b.timer = b.clock.NewTimer(at.Sub(now))
}

// c is the channel that fires when the next bookmark is due; nil when none will be.
func (b *bookmarker) c() <-chan time.Time {
	if b.timer == nil {
		return nil
	}
	return b.timer.C()
}

// sent records that the due bookmark went out and times the next.
func (b *bookmarker) sent() {
	b.pending = false
	b.arm()
}

func (b *bookmarker) stop() {
	if b.timer != nil {
		b.timer.Stop()
	}
}

// wake is why a waiting watch woke.
type wake int

const (
	wokeByWrite wake = iota
	wokeByBookmark
	wokeByEnd // the client went away, the server is stopping or the watch timed out
)

// waitForWriteOrBookmark blocks until the next write, a due bookmark or the end of the watch.
func (s *Server) waitForWriteOrBookmark(ctx context.Context, next <-chan struct{}, timeout, bookmark <-chan time.Time) wake {
	select {
	case <-next:
		return wokeByWrite
	case <-bookmark:
		return wokeByBookmark
	case <-ctx.Done():
	case <-s.stop:
	case <-timeout:
	}
	return wokeByEnd
}

// quietSince reports the latest resource version and whether res had no write after from, so
// that a bookmark at that version skips nothing the watch has not sent.
func (st *store) quietSince(res *resource, from uint64) (uint64, bool) {
	st.lock()
	defer st.unlock()
	h := st.buckets[res.name].history
	return st.rv, len(h) == 0 || h[len(h)-1].rv <= from
}
