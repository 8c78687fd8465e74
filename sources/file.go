package sources

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/utils/clock"
	utilio "k8s.io/utils/io"

	"github.com/minikubelet/minikubelet/api/podkey"
	"github.com/minikubelet/minikubelet/podconfig"
	"github.com/minikubelet/minikubelet/sim/trace"
	"github.com/minikubelet/minikubelet/sources/staticpod"
)

// DefaultFileCheckFrequency is the kubelet's default fileCheckFrequency.
const DefaultFileCheckFrequency = 20 * time.Second

// FileOptions configures a File source.
type FileOptions struct {
	// Path is the static pod path: a directory of manifests or one manifest file. Trailing
	// separators are trimmed, as the kubelet does. Required.
	Path string
	// NodeName is the kubelet's node name.
	NodeName string
	// Period is the relist period (fileCheckFrequency). Zero means DefaultFileCheckFrequency.
	Period time.Duration
	// Clock schedules relists. Required.
	Clock clock.PassiveClock
	// Tracer receives "set" and "error" events. Required; trace.Discard records nothing.
	Tracer trace.Tracer
	// FS is where manifests are read from. Nil means the real disk.
	FS FileSystem
}

func (o FileOptions) validate() error {
	var missing []string
	if o.Path == "" {
		missing = append(missing, "Path")
	}
	if o.Clock == nil {
		missing = append(missing, "Clock")
	}
	if o.Tracer == nil {
		missing = append(missing, "Tracer")
	}
	return missingOptions(missing)
}

// File is the static pod file source: the kubelet's sourceFile without its goroutines. It keeps
// the kubelet's store semantics (an UndeltaStore keyed by namespace/name that pushes its whole
// content after every change) and its map from file path to the key last parsed from it, quirks
// included. It is not safe for concurrent use, except CheckWatchPath.
type File struct {
	path     string
	nodeName string
	period   time.Duration
	clock    clock.PassiveClock
	tracer   trace.Tracer
	fs       FileSystem

	store      map[string]*v1.Pod     // namespace/name → pod, the UndeltaStore
	fileKeys   map[string]string      // file path → store key last parsed from it, the fileKeyMapping
	nextRelist time.Time              // the next tick of the kubelet's relist ticker
	decoded    map[string]decodedFile // file path → its last successful decode; a cache only

	// What follows lets a relist of unchanged files, every 20s, allocate nothing (the file
	// system aside): the glob pattern, the buffers a relist reads into, and the SET of the store
	// as last pushed, sent again while the store holds the same pods.
	pattern string
	readBuf []byte
	listed  []keyedPod
	pushed  *set
	// relisted is what the last directory relist that traced no error saw, for a file system
	// that counts its changes (ChangeCounter): its number, and the SET the relist pushed.
	relisted struct {
		version uint64
		pushed  *set
	}
}

// NewFile returns a File source, or an error wrapping ErrMissingOption. The first relist is due
// at once.
func NewFile(opts FileOptions) (*File, error) {
	if err := opts.validate(); err != nil {
		return nil, fmt.Errorf("file source: %w", err)
	}
	if opts.Period <= 0 {
		opts.Period = DefaultFileCheckFrequency
	}
	if opts.FS == nil {
		opts.FS = osFileSystem{}
	}
	return &File{
		fs:         opts.FS,
		path:       strings.TrimRight(opts.Path, string(os.PathSeparator)),
		nodeName:   opts.NodeName,
		period:     opts.Period,
		clock:      opts.Clock,
		tracer:     opts.Tracer,
		store:      map[string]*v1.Pod{},
		fileKeys:   map[string]string{},
		decoded:    map[string]decodedFile{},
		nextRelist: opts.Clock.Now(),
		pattern:    filepath.Join(strings.TrimRight(opts.Path, string(os.PathSeparator)), "[^.]*"),
	}, nil
}

// Path returns the static pod path the source reads, with trailing separators trimmed.
func (f *File) Path() string { return f.path }

// NextWake returns when the next periodic relist is due. Relists follow a fixed ticker grid from
// construction, as the kubelet's ticker does; a missed tick is dropped, not made up.
func (f *File) NextWake() (time.Time, bool) { return f.nextRelist, true }

// Relist reads the whole static pod path: the kubelet's listConfig. The update, when not nil, is
// to be sent whatever the error. In a directory every bad manifest is skipped and reported, and
// the returned error joins those reports; the good manifests still make the SET.
//
// The kubelet's store rules apply: a directory with no valid manifest sends an empty SET without
// clearing the store (quirk Q3); a bad single file sends nothing and keeps its old pod (Q4).
func (f *File) Relist() (*podconfig.Update, error) {
	const fn = "listConfig"
	now := f.clock.Now()
	if !f.nextRelist.After(now) {
		f.nextRelist = f.nextRelist.Add((now.Sub(f.nextRelist)/f.period + 1) * f.period)
	}
	counter, counts := f.fs.(ChangeCounter)
	var version uint64
	if counts {
		version = counter.Version()
		if f.pushed != nil && f.relisted.pushed == f.pushed && f.relisted.version == version {
			// The same files with the same bytes, and the store holds what that relist left.
			return f.push(fn), nil
		}
	}
	f.relisted.pushed = nil
	info, err := f.fs.Stat(f.path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			// The empty SET bypasses the store so that the source is marked seen.
			u := newSet(f.tracer, podconfig.FileSource, fn, nil)
			return u, traceError(f.tracer, podconfig.FileSource, fn, "", fmt.Errorf("%s: %w", f.path, ErrPathNotExist))
		}
		return nil, traceError(f.tracer, podconfig.FileSource, fn, "StatFailed", err)
	}
	switch {
	case info.IsDir():
		pods, errs, err := f.extractFromDir()
		if err != nil {
			return nil, err
		}
		if len(pods) == 0 {
			return newSet(f.tracer, podconfig.FileSource, fn, nil), errors.Join(errs...)
		}
		f.replace(pods)
		u := f.push(fn)
		if counts && len(errs) == 0 {
			f.relisted.version, f.relisted.pushed = version, f.pushed
		}
		return u, errors.Join(errs...)
	case info.Mode().IsRegular():
		pod, key, err := f.extractFromFile(f.path)
		if err != nil {
			return nil, traceError(f.tracer, podconfig.FileSource, fn, "ReadFailed", err)
		}
		f.listed = append(f.listed[:0], keyedPod{key, pod})
		f.replace(f.listed)
		return f.push(fn), nil
	default:
		return nil, traceError(f.tracer, podconfig.FileSource, fn, "NotFileOrDir",
			fmt.Errorf("%s: path is not a directory or file", f.path))
	}
}

// extractFromDir reads every non-dot entry of the directory in sorted order, skipping (and
// reporting) what cannot be used. It does not recurse and has no extension filter, so backup
// files such as "web.yaml~" are manifests too.
//
// The list is the source's buffer, valid until the next read.
func (f *File) extractFromDir() (pods []keyedPod, skipped []error, err error) {
	const fn = "extractFromDir"
	entries, err := f.fs.Glob(f.pattern)
	if err != nil {
		// Only a malformed pattern fails, e.g. a static pod path with glob metacharacters.
		return nil, nil, traceError(f.tracer, podconfig.FileSource, fn, "GlobFailed", fmt.Errorf("%s: glob failed: %w", f.path, err))
	}
	sort.Strings(entries)
	for path := range f.decoded {
		if _, found := slices.BinarySearch(entries, path); !found {
			delete(f.decoded, path)
		}
	}
	clear(f.listed) // drop the last read's pods
	pods = f.listed[:0]
	defer func() { f.listed = pods }()
	for _, path := range entries {
		info, err := f.fs.Stat(path) // follows symlinks; a dangling one fails here
		if err != nil {
			skipped = append(skipped, traceError(f.tracer, podconfig.FileSource, fn, "StatFailed", err))
			continue
		}
		switch {
		case info.IsDir():
			// The kubelet logs "not recursing into manifest path" and moves on; so does the
			// runner, so this is neither traced nor returned.
		case info.Mode().IsRegular():
			pod, key, err := f.extractFromFile(path)
			switch {
			case errors.Is(err, fs.ErrNotExist):
				// The file vanished between the glob and the read: skipped silently.
			case err != nil:
				skipped = append(skipped, traceError(f.tracer, podconfig.FileSource, fn, "ReadFailed", err))
			default:
				pods = append(pods, keyedPod{key, pod})
			}
		default:
			skipped = append(skipped, traceError(f.tracer, podconfig.FileSource, fn, "NotFileOrDir",
				fmt.Errorf("%s: manifest path is not a directory or file: %v", path, info.Mode())))
		}
	}
	return pods, skipped, nil
}

// extractFromFile reads and decodes one manifest and records which store key it produced, which
// it returns with the pod.
func (f *File) extractFromFile(path string) (*v1.Pod, string, error) {
	file, err := f.fs.Open(path)
	if err != nil {
		return nil, "", err
	}
	defer file.Close()
	// The bytes go to a buffer the next read reuses: most files did not change, and only a
	// changed one needs a copy of its own.
	data, err := readAtMost(file, maxConfigLength, f.readBuf[:0])
	f.readBuf = data
	if err != nil {
		return nil, "", fmt.Errorf("%s: %w", path, err)
	}
	if d, ok := f.decoded[path]; ok && bytes.Equal(d.data, data) {
		// Decoding depends only on the bytes, the path and the node name, so an unchanged file
		// decodes to the same pod, or fails the same way: skip the YAML work, which dominates
		// every relist. The pod is shared read-only, so PodConfig recognises the object it saw
		// last time.
		if d.err != nil {
			return nil, "", d.err
		}
		f.fileKeys[path] = d.key
		return d.pod, d.key, nil
	}
	delete(f.decoded, path)
	data = bytes.Clone(data)
	pod, parsed, err := staticpod.DecodePod(data, staticpod.Options{NodeName: f.nodeName, Source: path, IsFile: true})
	if !parsed {
		err = fmt.Errorf("%s: %w as pod(%s), please check config file", path, ErrUnparsable, errorText(err))
		f.decoded[path] = decodedFile{data: data, err: err}
		return nil, "", err
	}
	if err != nil {
		err = fmt.Errorf("%s: %w", path, err)
		f.decoded[path] = decodedFile{data: data, err: err}
		return nil, "", err
	}
	key := podkey.Of(pod)
	f.decoded[path] = decodedFile{data: data, pod: pod, key: key}
	f.fileKeys[path] = key
	return pod, key, nil
}

// readAtMost is k8s.io/utils/io's ReadAtMost into buf: it reads r to its end, or up to limit bytes
// and then fails with ErrLimitReached, and returns buf grown as needed.
func readAtMost(r io.Reader, limit int, buf []byte) ([]byte, error) {
	for {
		if len(buf) >= limit {
			return buf, utilio.ErrLimitReached
		}
		if len(buf) == cap(buf) {
			buf = slices.Grow(buf, min(max(512, cap(buf)), limit-len(buf)))
		}
		n, err := r.Read(buf[len(buf):min(cap(buf), limit)])
		buf = buf[:len(buf)+n]
		if errors.Is(err, io.EOF) {
			return buf, nil
		}
		if err != nil {
			return buf, err
		}
	}
}

// decodedFile remembers the last decode of one manifest file: its pod and store key, or why it
// failed.
type decodedFile struct {
	data []byte
	pod  *v1.Pod
	key  string
	err  error
}

// HandleEvent applies one watch event: the kubelet's consumeWatchEvent. An add or modify re-reads
// the file and stores its pod (a bad file leaves the old pod in place until a relist); a delete
// removes the pod last read from that path. Events for dotfiles and never-read paths change
// nothing and return nil.
func (f *File) HandleEvent(ev WatchEvent) (*podconfig.Update, error) {
	const fn = "consumeWatchEvent"
	if strings.HasPrefix(filepath.Base(ev.Path), ".") {
		return nil, nil
	}
	switch ev.Op {
	case WatchAdd, WatchModify:
		pod, key, err := f.extractFromFile(ev.Path)
		if err != nil {
			return nil, traceError(f.tracer, podconfig.FileSource, fn, "ReadFailed",
				fmt.Errorf("can't process config file %q: %w", ev.Path, err))
		}
		if f.store[key] != pod {
			f.store[key] = pod
			f.pushed = nil
		}
		return f.push(fn), nil
	case WatchDelete:
		key, ok := f.fileKeys[ev.Path]
		if !ok {
			return nil, nil
		}
		if _, ok := f.store[key]; !ok {
			return nil, traceError(f.tracer, podconfig.FileSource, fn, "",
				fmt.Errorf("%s: the pod with key %s %w", ev.Path, key, ErrNotInCache))
		}
		delete(f.store, key)
		delete(f.fileKeys, ev.Path)
		f.pushed = nil
		return f.push(fn), nil
	}
	return nil, traceError(f.tracer, podconfig.FileSource, fn, "UnknownEvent",
		fmt.Errorf("%s: unknown watch event %v", ev.Path, ev.Op))
}

// CheckWatchPath is the first step of the kubelet's doWatch, run before each attempt to start the
// watcher. A missing path yields an empty SET (bypassing the store) and an error wrapping
// ErrPathNotExist, which the watch loop retries without back-off. Any other stat error is
// returned alone; nil means the watcher can be started. It reads no mutable state, so the watch
// goroutine may call it while another goroutine relists.
func (f *File) CheckWatchPath() (*podconfig.Update, error) {
	const fn = "doWatch"
	if _, err := f.fs.Stat(f.path); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			u := newSet(f.tracer, podconfig.FileSource, fn, nil)
			return u, traceError(f.tracer, podconfig.FileSource, fn, "", fmt.Errorf("%s: %w", f.path, ErrPathNotExist))
		}
		return nil, traceError(f.tracer, podconfig.FileSource, fn, "StatFailed", err)
	}
	return nil, nil
}

// replace makes the store hold pods, a later pod with the same key winning, as the UndeltaStore's
// Replace does. A store that already holds exactly these pods is left as it is, with its SET.
func (f *File) replace(pods []keyedPod) {
	same := len(pods) == len(f.store)
	for _, p := range pods {
		if !same {
			break
		}
		same = f.store[p.key] == p.pod
	}
	if same {
		return
	}
	clear(f.store)
	for _, p := range pods {
		f.store[p.key] = p.pod
	}
	f.pushed = nil
}

// push sends the whole store, as the UndeltaStore does after every change. While the store holds
// the same pods it sends the same SET, which nothing changes.
func (f *File) push(fn string) *podconfig.Update {
	if f.pushed == nil {
		s := makeStoreSet(podconfig.FileSource, f.store)
		f.pushed = &s
	}
	return f.pushed.send(f.tracer, fn)
}
