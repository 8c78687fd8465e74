package fakeapiserver

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"strconv"

	"google.golang.org/protobuf/encoding/protowire"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/klog/v2"
)

// watchBatch is how many history events a watch copies out per lock acquisition.
const watchBatch = 256

// watchBufferBytes bounds the encoded events a watch holds before writing them to its client.
// One event larger than this is held whole.
const watchBufferBytes = 64 << 10

// watcher streams one watch response.
type watcher struct {
	s      *Server
	t      target
	opts   listOptions
	r      *http.Request
	w      http.ResponseWriter
	rc     *http.ResponseController
	out    output
	tablev string
	buf    bytes.Buffer
	// sentColumns is set after the first table, since only the first carries column definitions.
	sentColumns bool
}

// watch serves a watch request: optional initial events, then every later write that passes the
// selectors, until the client goes away, the server stops or timeoutSeconds pass.
func (s *Server) watch(w http.ResponseWriter, r *http.Request, t target) error {
	out, tablev, err := negotiate(r)
	if err != nil {
		return err
	}
	opts, err := parseListOptions(r, t)
	if err != nil {
		return err
	}
	defaultWatchList(&opts)
	if err := validateListOptions(opts, true); err != nil {
		return err
	}
	wt := &watcher{s: s, t: t, opts: opts, r: r, w: w, rc: http.NewResponseController(w), out: out, tablev: tablev}
	return s.stream(r.Context(), t, opts, wt)
}

// watchSink is where a watch's events go: the HTTP response (watcher) or a watch in process
// (inprocess_watch.go). stream decides what is sent and when; a sink only carries it.
type watchSink interface {
	// begin starts the answer, before the first event.
	begin()
	// event sends one object event: e is the stored entry, or a copy for a DELETED made of an
	// object that left the selection.
	event(typ watch.EventType, e *entry)
	// bookmark sends a BOOKMARK at rv; initialEnd marks it as the end of a watch-list's
	// initial events (metav1.InitialEventsAnnotationKey), which kube-apiserver sets on that
	// bookmark only, not on the periodic ones after it.
	bookmark(rv uint64, initialEnd bool)
	// fail sends err as the watch's last event.
	fail(err error) error
	// spill hands over what is held once it is large; flush hands over everything held.
	spill() error
	flush() error
	// end ends a watch whose hand-over failed with err.
	end(err error) error
}

// stream runs a watch whose options are checked: optional initial events, then every later write
// that passes the selectors, until ctx is done, the server stops or timeoutSeconds pass.
func (s *Server) stream(ctx context.Context, t target, opts listOptions, wt watchSink) error {
	sendInitial := opts.resourceVersion == "" || opts.resourceVersion == "0"
	if opts.sendInitialEvents != nil {
		sendInitial = *opts.sendInitialEvents
	}
	var initial []*entry
	var startErr error
	var from, epoch uint64
	_ = s.store.lockedAs(ctx, t.class, func() error {
		from, epoch = s.store.rv, s.store.epoch
		if opts.resourceVersion != "" && opts.resourceVersion != "0" {
			want, _ := strconv.ParseUint(opts.resourceVersion, 10, 64)
			if want > from {
				startErr = tooLargeRV(want, from)
				return nil
			}
			if !sendInitial {
				from = want
			}
		}
		if sendInitial {
			initial = s.store.list(t.res, t.namespace)
		}
		return nil
	})

	wt.begin()
	if startErr != nil {
		return wt.fail(startErr)
	}
	for _, e := range initial {
		if opts.matches(t.res, e) {
			wt.event(watch.Added, e)
			if err := wt.spill(); err != nil {
				return wt.end(err)
			}
		}
	}
	if sendInitial && opts.sendInitialEvents != nil && opts.bookmarks {
		wt.bookmark(from, true)
	}
	if err := wt.flush(); err != nil {
		return wt.end(err)
	}
	timeout, stopTimer := s.watchTimer(opts.timeout)
	defer stopTimer()
	bookmarks := s.newBookmarker(opts)
	defer bookmarks.stop()
	match := func(e *entry) bool {
		return e != nil && (t.namespace == "" || e.meta().GetNamespace() == t.namespace) && opts.matches(t.res, e)
	}
	for {
		evs, expired, closed, next := s.store.since(t.res, from, watchBatch, epoch)
		if closed {
			return nil
		}
		if expired {
			return wt.fail(apierrors.NewResourceExpired(fmt.Sprintf("too old resource version: %d (%d)", from, s.store.currentRV())))
		}
		for _, ev := range evs {
			if typ, e, ok := selectEvent(ev, match); ok {
				wt.event(typ, e)
			}
			from = ev.rv
			if err := wt.spill(); err != nil {
				return wt.end(err)
			}
		}
		if len(evs) > 0 {
			if err := wt.flush(); err != nil {
				return wt.end(err)
			}
			continue
		}
		if bookmarks.pending {
			// Everything up to from is sent; the bookmark carries the latest version if no
			// write of this resource came after from, and waits for the next round otherwise.
			if rv, quiet := s.store.quietSince(t.res, from); quiet {
				wt.bookmark(rv, false)
				if err := wt.flush(); err != nil {
					return wt.end(err)
				}
				from = rv
				bookmarks.sent()
			}
			continue
		}
		switch s.waitForWriteOrBookmark(ctx, next, timeout, bookmarks.c()) {
		case wokeByEnd:
			return nil
		case wokeByBookmark:
			bookmarks.pending = true
		}
	}
}

// begin writes the response's headers. A watch in protobuf is a stream of length-prefixed frames,
// which kube-apiserver marks with the stream=watch parameter.
func (wt *watcher) begin() {
	if wt.out == outputProtobuf {
		wt.w.Header().Set("Content-Type", protobufMediaType+";stream=watch")
	} else {
		wt.w.Header().Set("Content-Type", "application/json")
	}
	wt.w.Header().Set("Cache-Control", "no-cache, private")
	wt.w.WriteHeader(http.StatusOK)
}

// event encodes one object event.
func (wt *watcher) event(typ watch.EventType, e *entry) {
	if wt.out != outputProtobuf {
		wt.encode(typ, e.encoded(), e)
		return
	}
	pb, err := e.protobuf()
	if err != nil {
		return
	}
	wt.frame(typ, pb)
}

// frame encodes one event in protobuf as kube-apiserver frames it: a metav1.WatchEvent, whose
// object is in the protobuf envelope, itself without one, after its length in four bytes, big
// endian.
func (wt *watcher) frame(typ watch.EventType, pb []byte) {
	// The frame's own fields take at most 26 bytes besides pb (the length, three tags, three
	// varints of at most five bytes, the longest type): room for it all at once.
	wt.buf.Grow(len(pb) + 32)
	wt.buf.Write(appendWatchFrame(wt.buf.AvailableBuffer(), typ, pb))
}

// appendWatchFrame appends to dst the frame of one watch event whose object's envelope is pb:
// the bytes metav1.WatchEvent's generated Marshal gives, after their length. Every watch in
// protobuf sends every event of its resource, so the frame is written straight into the
// watch's buffer rather than marshalled into a message of its own (a copy of the object's
// encoding per event and watch) and copied again. The message is two fields in order: the
// type (field 1, a string) and the object (field 2, a runtime.RawExtension, whose one field is
// the raw bytes, field 1, written only when they are not nil, as the generated code does).
func appendWatchFrame(dst []byte, typ watch.EventType, pb []byte) []byte {
	ext := 0
	if pb != nil {
		ext = 1 + protowire.SizeBytes(len(pb))
	}
	size := 1 + protowire.SizeBytes(len(typ)) + 1 + protowire.SizeBytes(ext)
	dst = binary.BigEndian.AppendUint32(dst, uint32(size))
	dst = protowire.AppendTag(dst, 1, protowire.BytesType)
	dst = protowire.AppendString(dst, string(typ))
	dst = protowire.AppendTag(dst, 2, protowire.BytesType)
	dst = protowire.AppendVarint(dst, uint64(ext))
	if pb != nil {
		dst = protowire.AppendTag(dst, 1, protowire.BytesType)
		dst = protowire.AppendBytes(dst, pb)
	}
	return dst
}

// end ends a watch whose write failed. A write that timed out is a client that stopped reading:
// the watch is dropped with the log line of kube-apiserver's cacher, and the client, seeing its
// stream end, watches again from the last version it saw (or relists on 410 Gone). Any other
// write error is a client that went away.
func (wt *watcher) end(err error) error {
	r := wt.r
	if errors.Is(err, os.ErrDeadlineExceeded) {
		klog.FromContext(r.Context()).V(1).Info("Forcing watcher close due to unresponsiveness",
			"resource", wt.t.res.groupResource().String(), "client", r.RemoteAddr, "bufferedBytes", wt.buf.Len(), "err", err)
	}
	return nil
}

// selectEvent turns one history event into what a watch whose selection is match sees, if
// anything: an update that enters the selection is ADDED, one that leaves it is DELETED.
func selectEvent(ev event, match func(*entry) bool) (watch.EventType, *entry, bool) {
	curOK := match(ev.cur)
	prevOK := match(ev.prev)
	switch {
	case ev.typ == watch.Modified && curOK && !prevOK:
		return watch.Added, ev.cur, true
	case ev.typ == watch.Modified && !curOK && prevOK:
		// The object left the selection: the watcher sees it deleted, with its last content
		// that matched and the version of the write that made it leave.
		prev := ev.prev.obj.DeepCopyObject()
		mustMeta(prev).SetResourceVersion(formatRV(ev.rv))
		raw, err := json.Marshal(prev)
		if err != nil {
			return "", nil, false
		}
		return watch.Deleted, newEntry(prev, raw), true
	case curOK:
		return ev.typ, ev.cur, true
	}
	return "", nil, false
}

func (wt *watcher) encode(typ watch.EventType, raw []byte, e *entry) {
	if wt.out == outputTable && typ != watch.Error && typ != watch.Bookmark {
		table, err := wt.s.buildTable(wt.tablev, wt.t.res, []*entry{e}, "", wt.opts.includeObject, !wt.sentColumns)
		if err != nil {
			return
		}
		wt.sentColumns = true
		if raw, err = json.Marshal(table); err != nil {
			return
		}
	}
	wt.buf.WriteString(`{"type":`)
	wt.buf.WriteString(strconv.Quote(string(typ)))
	wt.buf.WriteString(`,"object":`)
	wt.buf.Write(raw)
	wt.buf.WriteString("}\n")
}

// bookmark sends a bookmark: the end of a watch-list's initial events, as client-go's reflector
// expects, or a periodic one.
//
// The object is kube-apiserver's: the resource's empty typed object (the cacher's newFunc) with
// its resourceVersion set, encoded as any object is. In JSON that puts kind and apiVersion first,
// then metadata, then the kind's fields that are never omitted (a pod's "spec":{"containers":
// null} and "status":{}), which a map of the three would leave out and sort otherwise.
func (wt *watcher) bookmark(rv uint64, initialEnd bool) {
	obj := wt.t.res.newObj()
	obj.GetObjectKind().SetGroupVersionKind(wt.t.res.gvk())
	m := mustMeta(obj)
	m.SetResourceVersion(formatRV(rv))
	if initialEnd {
		m.SetAnnotations(map[string]string{metav1.InitialEventsAnnotationKey: "true"})
	}
	if wt.out == outputProtobuf {
		if pb, err := encodeProtobuf(obj); err == nil {
			wt.frame(watch.Bookmark, pb)
		}
		return
	}
	if raw, err := json.Marshal(obj); err == nil {
		wt.encode(watch.Bookmark, raw, nil)
	}
}

func (wt *watcher) fail(err error) error {
	st := err.(apierrors.APIStatus).Status()
	st.Kind, st.APIVersion = "Status", "v1"
	if wt.out == outputProtobuf {
		if pb, err := encodeProtobuf(&st); err == nil {
			wt.frame(watch.Error, pb)
		}
	} else {
		raw, _ := json.Marshal(&st)
		wt.encode(watch.Error, raw, nil)
	}
	_ = wt.flush()
	return nil
}

// spill writes the buffered events out once they reach watchBufferBytes, so that what a watch
// holds for its client stays bounded however many events it is behind.
func (wt *watcher) spill() error {
	if wt.buf.Len() < watchBufferBytes {
		return nil
	}
	return wt.flush()
}

// flush writes the buffered events out and flushes them to the client, within watchWriteTimeout.
func (wt *watcher) flush() error {
	if err := writeWithin(wt.rc, wt.w, wt.buf.Bytes()); err != nil {
		return err
	}
	if wt.buf.Cap() > 2*watchBufferBytes {
		wt.buf = bytes.Buffer{} // do not keep what one large object grew it to
	}
	wt.buf.Reset()
	return nil
}
