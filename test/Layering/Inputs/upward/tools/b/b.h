// A private header of tool b.
