// Block scans check BlockThreads too (negative sizes are not "run time").
// expect: blockInclusiveScan: template parameter BlockThreads must be the block size (1..1024)
#include <warpkit/scan.cuh>
__global__ void k(int* p) { p[threadIdx.x] = warpkit::blockInclusiveScan<-1>(p[threadIdx.x], warpkit::Sum{}); }
