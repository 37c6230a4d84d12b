//go:build !linux

package filestore

import (
	"errors"
	"os"
)

// syncfsAll: without syncfs(2), each file a batch wrote is fsynced.
const syncfsAll = false

func syncfs(*os.File) error { return errors.New("syncfs is not available") }
