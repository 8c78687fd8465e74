package fakeapiserver

import (
	"encoding/json"
	"fmt"
	"net/http"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/minikubelet/minikubelet/controlplane/fakeapiserver/internal/registry"
)

// The column sets follow kube-apiserver's printers: priority 0 columns are the default kubectl
// output, priority 1 columns are added by -o wide.

func col(name, typ, format string, priority int32) metav1.TableColumnDefinition {
	return registry.Col(name, typ, format, priority)
}

var defaultColumns = []metav1.TableColumnDefinition{
	col("Name", "string", "name", 0),
	col("Age", "string", "", 0),
}

func defaultCells(now time.Time, obj runtime.Object) []any {
	m := mustMeta(obj)
	return []any{m.GetName(), age(now, m.GetCreationTimestamp())}
}

// age renders the time since t the way kubectl does, "<unknown>" for a zero time.
func age(now time.Time, t metav1.Time) string { return registry.Age(now, t) }

func (s *Server) writeTable(w http.ResponseWriter, version string, res *resource, entries []*entry, rv string, include metav1.IncludeObjectPolicy) error {
	table, err := s.buildTable(version, res, entries, rv, include, true)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, table)
	return nil
}

// buildTable renders entries as a meta.k8s.io Table. Each row carries the object as
// PartialObjectMetadata (the default), the whole object, or nothing, per includeObject.
func (s *Server) buildTable(version string, res *resource, entries []*entry, rv string, include metav1.IncludeObjectPolicy, withColumns bool) (*metav1.Table, error) {
	columns, cells := res.columns, res.cells
	if cells == nil {
		columns, cells = defaultColumns, defaultCells
	}
	now := s.clock.Now()
	table := &metav1.Table{
		TypeMeta: metav1.TypeMeta{Kind: "Table", APIVersion: "meta.k8s.io/" + version},
		ListMeta: metav1.ListMeta{ResourceVersion: rv},
		Rows:     make([]metav1.TableRow, 0, len(entries)),
	}
	if withColumns {
		table.ColumnDefinitions = columns
	}
	for _, e := range entries {
		row := metav1.TableRow{Cells: cells(now, e.obj)}
		switch include {
		case metav1.IncludeNone:
		case metav1.IncludeObject:
			row.Object.Raw = e.encoded()
		default:
			m := mustMeta(e.obj)
			partial := metav1.PartialObjectMetadata{
				TypeMeta: metav1.TypeMeta{Kind: "PartialObjectMetadata", APIVersion: "meta.k8s.io/v1"},
				ObjectMeta: metav1.ObjectMeta{
					Name: m.GetName(), Namespace: m.GetNamespace(), UID: m.GetUID(),
					ResourceVersion: m.GetResourceVersion(), CreationTimestamp: m.GetCreationTimestamp(),
					DeletionTimestamp: m.GetDeletionTimestamp(), Labels: m.GetLabels(),
					Annotations: m.GetAnnotations(), OwnerReferences: m.GetOwnerReferences(),
					GenerateName: m.GetGenerateName(), Generation: m.GetGeneration(),
					DeletionGracePeriodSeconds: m.GetDeletionGracePeriodSeconds(),
				},
			}
			raw, err := json.Marshal(&partial)
			if err != nil {
				return nil, fmt.Errorf("encode row of %s: %w", m.GetName(), err)
			}
			row.Object.Raw = raw
		}
		table.Rows = append(table.Rows, row)
	}
	return table, nil
}
