//go:build !race

package model

// raceBuild: see NewBackend.
const raceBuild = false
