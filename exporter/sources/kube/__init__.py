"""Reaching the Kubernetes API as kubectl does: kubeconfigs, exec credential plugins and TLS."""
