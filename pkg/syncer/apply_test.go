package syncer

import (
	"errors"
	"fmt"
	"slices"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

func TestFieldManagerConflicts(t *testing.T) {
	gr := schema.GroupResource{Group: "admissionregistration.k8s.io", Resource: "mutatingwebhookconfigurations"}
	ssaConflict := &apierrors.StatusError{ErrStatus: metav1.Status{
		Status: metav1.StatusFailure,
		Code:   409,
		Reason: metav1.StatusReasonConflict,
		Details: &metav1.StatusDetails{Causes: []metav1.StatusCause{{
			Type:    metav1.CauseTypeFieldManagerConflict,
			Message: `conflict with "kubectl-edit" using admissionregistration.k8s.io/v1`,
			Field:   `.webhooks[name="a"].clientConfig.caBundle`,
		}}},
	}}
	tests := []struct {
		name string
		err  error
		want []string
	}{
		{name: "no_error", err: nil},
		{name: "other_error", err: errors.New("connection refused")},
		{name: "resource_version_conflict", err: apierrors.NewConflict(gr, "x", errors.New("the object has been modified"))},
		{name: "not_found", err: apierrors.NewNotFound(gr, "x")},
		{name: "field_manager_conflict", err: ssaConflict, want: []string{`conflict with "kubectl-edit" using admissionregistration.k8s.io/v1`}},
		{name: "wrapped_field_manager_conflict", err: fmt.Errorf("apply: %w", ssaConflict), want: []string{`conflict with "kubectl-edit" using admissionregistration.k8s.io/v1`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := fieldManagerConflicts(tt.err); !slices.Equal(got, tt.want) {
				t.Errorf("fieldManagerConflicts = %q, want %q", got, tt.want)
			}
		})
	}
}
