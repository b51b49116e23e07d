package klm

import (
	"context"
	"errors"
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// apply server-side applies every object at once, under FieldManager with
// ForceOwnership, as internal/manifest/skrresources/ssa.go ConcurrentSSA
// does: a field another manager owns is taken over, never a conflict. Each
// object is replaced by the API server's answer, so that the state check
// reads the live status. Objects whose CustomResourceDefinition is in the
// same manifest fail until it is established, and so does the reconcile,
// until a later one.
func apply(ctx context.Context, c client.Client, objs []*unstructured.Unstructured) error {
	results := make(chan error, len(objs))
	for _, obj := range objs {
		go func() {
			obj.SetManagedFields(nil)
			err := c.Apply(ctx, client.ApplyConfigurationFromUnstructured(obj),
				client.ForceOwnership, client.FieldOwner(FieldManager))
			if err != nil {
				err = fmt.Errorf("apply %s: %w", identity(obj), err)
			}
			results <- err
		}()
	}
	var errs []error
	for range objs {
		if err := <-results; err != nil {
			errs = append(errs, err)
		}
	}
	if len(errs) > 0 {
		return fmt.Errorf("server-side apply of module resources failed: %w", errors.Join(errs...))
	}
	return nil
}
