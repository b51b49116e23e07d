package klm_test

import "testing"

// TestStandInReconcilesAsKLM pins each behaviour of KLM's Manifest
// reconcile that the stand-in mirrors, against a real kube-apiserver and
// etcd, which is both the control plane and the runtime. Every subtest has
// its own namespaces and its own stand-in, and reads the outcome in the API
// server: objects, their UIDs and managedFields, and the order of watch
// events.
func TestStandInReconcilesAsKLM(t *testing.T) {
	e := newEnv(t)
	for _, tc := range []struct {
		name string
		run  func(*testing.T, *env)
	}{
		{"version_bump_converges_to_the_new_layer", versionBumpConverges},
		{"dropped_object_deleted_before_new_objects_applied", droppedObjectDeletedBeforeApply},
		{"changed_api_version_recreates_the_object", changedAPIVersionRecreates},
		{"diff_without_version_change_is_not_pruned", sameVersionDiffNotPruned},
		{"remote_namespace_is_never_pruned", remoteNamespaceNotPruned},
		{"operator_kinds_outlive_the_other_objects", operatorKindsOutliveTheRest},
		{"deleted_manifest_prunes_in_two_phases_then_goes", deletedManifestPrunes},
		{"apply_takes_fields_from_another_manager", applyTakesOwnership},
		{"labels_and_annotations_mark_every_object", labelsMarkEveryObject},
		{"localized_images_replace_matching_name_and_tag", localizedImagesReplace},
		{"state_follows_the_first_deployment_only", stateFollowsFirstDeployment},
		{"skip_label_leaves_the_runtime_untouched", skipLeavesRuntimeUntouched},
		{"ready_manifest_is_applied_again_after_the_success_interval", readyRequeued},
		{"release_meta_pins_the_manifest_version", releaseMetaPinsVersion},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			tc.run(t, e)
		})
	}
}
