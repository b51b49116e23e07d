package klm

import (
	"context"
	"errors"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// errDeletionNotFinished says that a phase still has objects: the
// reconcile ends there and is requeued (internal/pkg/resources/cleanup.go).
var errDeletionNotFinished = errors.New("deletion is not yet finished")

// isOperatorKind reports whether kind is deleted in the second phase, once
// every other object is gone, so that an operator outlives the objects it
// may clean up (cleanup.go IsOperatorRelatedResources). It compares the
// kind alone, whatever the group.
func isOperatorKind(kind string) bool {
	switch kind {
	case "CustomResourceDefinition", "Namespace", "ServiceAccount", "Role", "ClusterRole",
		"RoleBinding", "ClusterRoleBinding", "Service", "Deployment":
		return true
	}
	return false
}

// phases splits objs into the two phases of deletion: every other kind
// first, then the operator's kinds.
func phases(objs []Resource) (first, second []Resource) {
	for _, r := range objs {
		if isOperatorKind(r.Kind) {
			second = append(second, r)
		} else {
			first = append(first, r)
		}
	}
	return first, second
}

// deleteInPhases deletes objs in two phases, as cleanup.go
// DeleteDiffResources does. In a phase every object is deleted at once,
// with background propagation; the phase is done only when every delete
// answers NotFound, so an object deleted now, or held by a finalizer,
// keeps it open: errDeletionNotFinished, and the second phase waits for a
// later reconcile.
func deleteInPhases(ctx context.Context, c client.Client, objs []Resource) error {
	first, second := phases(objs)
	if err := deleteAll(ctx, c, first); err != nil {
		return err
	}
	return deleteAll(ctx, c, second)
}

func deleteAll(ctx context.Context, c client.Client, objs []Resource) error {
	results := make(chan error, len(objs))
	for _, r := range objs {
		go func() {
			u := &unstructured.Unstructured{}
			u.SetGroupVersionKind(r.GroupVersionKind())
			u.SetNamespace(r.Namespace)
			u.SetName(r.Name)
			err := c.Delete(ctx, u, client.PropagationPolicy(metav1.DeletePropagationBackground))
			if err != nil && !apierrors.IsNotFound(err) {
				err = fmt.Errorf("delete %s: %w", r, err)
			}
			results <- err
		}()
	}
	pending := 0
	var errs []error
	for range objs {
		switch err := <-results; {
		case err == nil:
			pending++
		case !apierrors.IsNotFound(err):
			errs = append(errs, err)
		}
	}
	if len(errs) > 0 {
		return errors.Join(errs...)
	}
	if pending > 0 {
		return errDeletionNotFinished
	}
	return nil
}
