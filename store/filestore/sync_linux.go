package filestore

import (
	"os"

	"golang.org/x/sys/unix"
)

// syncfsAll: one syncfs(2) makes every write to the file system durable.
const syncfsAll = true

// syncfs syncs the file system that holds dir. Since Linux 5.8 it reports
// the write-back errors of any file of that file system since the last
// syncfs through the same handle.
func syncfs(dir *os.File) error {
	for {
		err := unix.Syncfs(int(dir.Fd()))
		if err != unix.EINTR {
			if err != nil {
				return &os.PathError{Op: "syncfs", Path: dir.Name(), Err: err}
			}
			return nil
		}
	}
}
