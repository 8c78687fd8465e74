package fakeapiserver

import (
	"bytes"
	"fmt"
	"net/http"
	"strconv"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
)

// deleteCollection serves DELETE of a collection: every object the list options select is
// deleted with the request's delete options, as kube-apiserver's generic registry does (pods
// gracefully, so a bound pod is only marked for deletion). The answer is the list of the
// selected objects as they were before the deletion, which is what the real server returns.
// Objects are deleted in key order under one hold of the store lock, so the watch events come
// out in a fixed order; the real server deletes in parallel, in no particular order.
func (s *Server) deleteCollection(w http.ResponseWriter, r *http.Request, t target) error {
	opts, err := parseListOptions(r, t)
	if err != nil {
		return err
	}
	delOpts, err := parseDeleteOptions(r)
	if err != nil {
		return err
	}
	dryRun := isDryRun(r) || len(delOpts.DryRun) > 0
	var selected []*entry
	var rv uint64
	err = s.store.lockedAs(r.Context(), t.class, func() error {
		rv = s.store.rv
		if err := validateListOptions(opts, false); err != nil {
			return err
		}
		// The objects deleted are the current ones: a resourceVersion from the future is refused.
		if want, err := strconv.ParseUint(opts.resourceVersion, 10, 64); err == nil && want > rv {
			return tooLargeRV(want, rv)
		}
		for _, e := range s.store.list(t.res, t.namespace) {
			if opts.matches(t.res, e) {
				selected = append(selected, e)
			}
		}
		for _, e := range selected {
			m := e.meta()
			item := target{res: t.res, namespace: m.GetNamespace(), name: m.GetName(), manager: t.manager}
			if err := checkPreconditions(item, e, delOpts.Preconditions); err != nil {
				return err
			}
			if t.res.name == "pods" {
				if _, _, err := s.deletePod(item, e, delOpts, dryRun); err != nil {
					return err
				}
				continue
			}
			if !dryRun {
				if _, err := s.store.commit(t.res, watch.Deleted, e.obj.DeepCopyObject(), e); err != nil {
					return err
				}
				if err := s.afterCommit(t.res, watch.Deleted, e.meta()); err != nil {
					return err
				}
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	if answerForm(r) == outputProtobuf {
		return writeProtoList(w, t.res, metav1.ListMeta{ResourceVersion: formatRV(rv)}, selected)
	}
	var buf bytes.Buffer
	fmt.Fprintf(&buf, `{"kind":%q,"apiVersion":%q,"metadata":{"resourceVersion":%q},"items":[`,
		t.res.kind+"List", t.res.gv.String(), formatRV(rv))
	for i, e := range selected {
		if i > 0 {
			buf.WriteByte(',')
		}
		buf.Write(e.encoded())
	}
	buf.WriteString("]}")
	writeRaw(w, http.StatusOK, buf.Bytes())
	return nil
}
