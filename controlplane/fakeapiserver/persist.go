package fakeapiserver

import (
	crand "crypto/rand"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	bolt "go.etcd.io/bbolt"
	bolterrors "go.etcd.io/bbolt/errors"
	corev1 "k8s.io/api/core/v1"
)

// dataFile is the name of the database in Options.DataDir.
const dataFile = "minikubelet-apiserver.db"

// openTimeout is how long New waits for another process to release the database.
const openTimeout = time.Second

var (
	metaBucket = []byte("meta")
	rvKey      = []byte("resourceVersion")
)

// ErrDataDirInUse is wrapped by New when another server holds the database in Options.DataDir.
var ErrDataDirInUse = errors.New("data directory in use by another API server")

// ErrCorruptData is wrapped by New when the database in Options.DataDir is empty or cannot be
// read: the server refuses to start on it, as etcd refuses a corrupt data directory, rather than
// start empty or crash. Moving the file away starts an empty store.
var ErrCorruptData = errors.New("corrupt database")

// disk keeps the store's objects in a bbolt database, so that they survive a restart: one bucket
// per resource, keyed namespace/name, holding each object's JSON as served, and the latest
// resource version. Every write is one transaction, committed (and synced) before the write is
// answered. Its methods are called with the store's mutex held.
type disk struct {
	db *bolt.DB
}

func openDisk(dir string, resources []*resource) (*disk, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("data directory %s: %w", dir, err)
	}
	path := filepath.Join(dir, dataFile)
	// bbolt makes a new database of an empty file. A store that was written has at least its
	// four first pages, so an empty file is one whose content was lost, and starting afresh on
	// it would quietly send every resource version back to the start.
	if fi, err := os.Stat(path); err == nil && fi.Mode().IsRegular() && fi.Size() == 0 {
		return nil, fmt.Errorf("open %s: the file is empty: %w", path, ErrCorruptData)
	}
	var db *bolt.DB
	err := unpanic(func() error {
		var err error
		db, err = bolt.Open(path, 0o600, &bolt.Options{Timeout: openTimeout})
		return err
	})
	if errors.Is(err, bolterrors.ErrTimeout) {
		return nil, fmt.Errorf("open %s: %w", path, ErrDataDirInUse)
	}
	if errors.Is(err, bolterrors.ErrInvalid) || errors.Is(err, bolterrors.ErrChecksum) || errors.Is(err, bolterrors.ErrVersionMismatch) {
		return nil, fmt.Errorf("open %s: %w: %w", path, ErrCorruptData, err)
	}
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	err = unpanic(func() error {
		return db.Update(func(tx *bolt.Tx) error {
			for _, name := range append([][]byte{metaBucket}, bucketNames(resources)...) {
				if _, err := tx.CreateBucketIfNotExists(name); err != nil {
					return err
				}
			}
			return nil
		})
	})
	if err != nil {
		db.Close()
		return nil, fmt.Errorf("prepare %s: %w", path, err)
	}
	return &disk{db: db}, nil
}

// unpanic runs fn and turns a panic into an error wrapping ErrCorruptData. bbolt checks its pages
// with assertions that panic ("page expected to be 2, but self identifies as 0"); on a damaged
// file they are the only sign of the damage, and a server must report it rather than crash.
func unpanic(fn func() error) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("%w: %s", ErrCorruptData, strings.Join(strings.Fields(fmt.Sprint(p)), " "))
		}
	}()
	return fn()
}

func bucketNames(resources []*resource) [][]byte {
	var out [][]byte
	for _, res := range resources {
		if res.view {
			continue
		}
		out = append(out, []byte(res.name))
	}
	return out
}

// load fills st with the stored objects and resource version. A watch cannot resume from before
// the restart: the history starts empty, compacted at the stored version, so such a watch gets
// 410 Gone and its client relists. Objects that expire get a full TTL from now.
func (d *disk) load(st *store) error {
	return unpanic(func() error { return d.loadTx(st) })
}

func (d *disk) loadTx(st *store) error {
	return d.db.View(func(tx *bolt.Tx) error {
		if v := tx.Bucket(metaBucket).Get(rvKey); v != nil {
			rv, err := strconv.ParseUint(string(v), 10, 64)
			if err != nil {
				return fmt.Errorf("stored resource version %q: %w: %w", v, ErrCorruptData, err)
			}
			st.rv = rv
		}
		for _, res := range st.resources {
			if res.view {
				continue
			}
			b := st.buckets[res.name]
			b.compacted = st.rv
			err := tx.Bucket([]byte(res.name)).ForEach(func(k, v []byte) error {
				obj := res.newObj()
				if err := json.Unmarshal(v, obj); err != nil {
					return fmt.Errorf("stored %s %q: %w: %w", res.singular, k, ErrCorruptData, err)
				}
				// Decoded anew, every string its own: what the stored objects repeat is
				// shared as a write's would be. Nothing else holds obj yet.
				switch o := obj.(type) {
				case *corev1.Pod:
					st.intern.Pod(o)
				case *corev1.Event:
					st.intern.StoredEvent(o)
				default:
					st.internFields(o)
				}
				// Sizing fills the cached string of every pointer quantity (an emptyDir's
				// sizeLimit, a divisor) that the decoder left without one ("8Gi" is parsed
				// without it), as a write's size check does before it stores: later sizing and
				// encodings of the stored object, and of the versions that share its spec, then
				// only read it while readers copy it beside them.
				if sz, ok := obj.(interface{ Size() int }); ok {
					_ = sz.Size()
				}
				if b.expiry != nil {
					// The resources whose entries keep no encoding (events, see commitEncoded)
					// keep none loaded either: encoded makes it again for the few reads.
					b.objects[string(k)] = &entry{obj: obj, size: len(v), keepsNone: true}
				} else {
					// The entry keeps the object's own encoding (a pod's entry its length and
					// hash, see resource.encodesOnDemand), not the disk's bytes: a file
					// written by other hands (or an older encoder) may spell a value otherwise,
					// and the field manager's value checks read the entry's encoding as the
					// object's (kube-apiserver encodes anew what it read from etcd for its
					// answers, but compares a write with etcd's bytes: docs/fidelity.md,
					// Storage).
					raw, err := json.Marshal(obj)
					if err != nil {
						return fmt.Errorf("stored %s %q: encode: %w", res.singular, k, err)
					}
					if res.encodesOnDemand {
						b.objects[string(k)] = summedEntry(obj, raw)
					} else {
						b.objects[string(k)] = newEntry(obj, raw)
					}
				}
				if ns, ok := obj.(*corev1.Namespace); ok && ns.Status.Phase == corev1.NamespaceTerminating {
					st.terminating.Store(true)
				}
				if b.expiry != nil {
					rv, _ := strconv.ParseUint(mustMeta(obj).GetResourceVersion(), 10, 64)
					st.pushExpiry(b, string(k), rv)
				}
				return nil
			})
			if err != nil {
				return err
			}
		}
		return nil
	})
}

// write stores raw under key (or deletes key when raw is nil) and the new resource version, in
// one transaction.
func (d *disk) write(res *resource, key string, raw []byte, rv uint64) error {
	err := unpanic(func() error { return d.writeTx(res, key, raw, rv) })
	if err != nil {
		return fmt.Errorf("store %s %s: %w", res.singular, key, err)
	}
	return nil
}

func (d *disk) writeTx(res *resource, key string, raw []byte, rv uint64) error {
	return d.db.Update(func(tx *bolt.Tx) error {
		b := tx.Bucket([]byte(res.name))
		var err error
		if raw == nil {
			err = b.Delete([]byte(key))
		} else {
			err = b.Put([]byte(key), raw)
		}
		if err != nil {
			return err
		}
		return tx.Bucket(metaBucket).Put(rvKey, []byte(formatRV(rv)))
	})
}

func (d *disk) close() error { return d.db.Close() }

// Close releases the data directory of a server made with Options.DataDir; it does nothing for
// one without. Call it after Serve has returned.
func (s *Server) Close() error {
	s.kubelets.CloseIdleConnections()
	if s.store.disk == nil {
		return nil
	}
	return s.store.disk.close()
}

// openDisk opens the database in dir and loads what it holds into st.
func (st *store) openDisk(dir string) error {
	d, err := openDisk(dir, st.resources)
	if err != nil {
		return err
	}
	if err := d.load(st); err != nil {
		d.close()
		return fmt.Errorf("load %s: %w", filepath.Join(dir, dataFile), err)
	}
	st.disk = d
	return nil
}

// randomlySeeded returns a source seeded from the operating system's random numbers.
func randomlySeeded() *rand.Rand {
	var b [8]byte
	_, _ = crand.Read(b[:])
	return rand.New(rand.NewSource(int64(binary.LittleEndian.Uint64(b[:]))))
}
