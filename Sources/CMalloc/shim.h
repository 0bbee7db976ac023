// glibc's allocator controls (mallopt), which Swift's Glibc module does not export.
#include <malloc.h>
