// samples/shuffles.cu: the classic warp-shuffle patterns with warpkit's public shuffles, each
// checked against the CPU: broadcast a lane's value, shift up and down, rotate around a segment,
// butterfly (xor) exchange, swap whole per-lane arrays across lanes, swap one array element
// between lane pairs, a butterfly sum, and a shift of a 12-byte struct (one call, three shuffles).
// Segments of 16 lanes, as the notes' `width = 16` examples.
#include <warpkit/vote.cuh>
#include <warpkit/reduce.cuh>

#include <stdio.h>

constexpr int W = 16; // segment width
constexpr int A = 4;  // array elements per lane

struct Particle {
    float x, y, z;
};

enum Pattern { Broadcast, Up, Down, Rotate, Xor, XorArray, SwapElem, Sum, StructUp, Patterns };
const char* const kNames[] = {"broadcast lane 3", "shift up 2",        "shift down 2",
                              "rotate by 2",      "xor 1 (butterfly)", "xor 1 on arrays",
                              "swap element 1/3", "butterfly sum",     "struct shift up 1"};

// out[pattern][lane][a]: what each lane holds after the pattern (A values; unused ones 0).
__global__ void patterns(float* out) {
    const int lane = (int)warpkit::laneId();
    const float v = (float)lane;
    float r[Patterns][A] = {};
    r[Broadcast][0] = warpkit::warpShuffleIdx<W>(v, 3);
    r[Up][0] = warpkit::warpShuffleUp<W>(v, 2);
    r[Down][0] = warpkit::warpShuffleDown<W>(v, 2);
    r[Rotate][0] = warpkit::warpShuffleRotate<W>(v, 2);
    r[Xor][0] = warpkit::warpShuffleXor<W>(v, 1);
    float arr[A];
    for (int a = 0; a < A; ++a) arr[a] = (float)(lane * A + a);
    for (int a = 0; a < A; ++a) r[XorArray][a] = warpkit::warpShuffleXor<W>(arr[a], 1); // whole arrays
    // Swap element 1 of even lanes with element 3 of their odd partners (the notes' swap).
    const bool even = (lane & 1) == 0;
    const float give = even ? arr[1] : arr[3];
    const float got = warpkit::warpShuffleXor<W>(give, 1);
    for (int a = 0; a < A; ++a) r[SwapElem][a] = arr[a];
    if (even) r[SwapElem][1] = got;
    else r[SwapElem][3] = got;
    float s = v;
    for (int m = 1; m < W; m <<= 1) s += warpkit::warpShuffleXor<W>(s, m);
    r[Sum][0] = s;
    const Particle p = warpkit::warpShuffleUp<W>(Particle{v, 2 * v, 3 * v}, 1); // any trivially copyable type
    r[StructUp][0] = p.x;
    r[StructUp][1] = p.y;
    r[StructUp][2] = p.z;
    for (int k = 0; k < Patterns; ++k)
        for (int a = 0; a < A; ++a) out[(k * 32 + lane) * A + a] = r[k][a];
}

// The CPU model of the same patterns.
static void model(int k, int lane, float* want) {
    const int seg = lane / W * W, p = lane - seg;
    for (int a = 0; a < A; ++a) want[a] = 0;
    switch (k) {
    case Broadcast:
        want[0] = (float)(seg + 3);
        break;
    case Up:
        want[0] = (float)(p >= 2 ? lane - 2 : lane);
        break;
    case Down:
        want[0] = (float)(p + 2 < W ? lane + 2 : lane);
        break;
    case Rotate:
        want[0] = (float)(seg + (p + 2) % W);
        break;
    case Xor:
        want[0] = (float)(lane ^ 1);
        break;
    case XorArray:
        for (int a = 0; a < A; ++a) want[a] = (float)((lane ^ 1) * A + a);
        break;
    case SwapElem:
        for (int a = 0; a < A; ++a) want[a] = (float)(lane * A + a);
        if (lane % 2 == 0) want[1] = (float)((lane + 1) * A + 3);
        else want[3] = (float)((lane - 1) * A + 1);
        break;
    case Sum:
        want[0] = (float)(W * seg + W * (W - 1) / 2);
        break;
    case StructUp: {
        const int src = p >= 1 ? lane - 1 : lane;
        want[0] = (float)src, want[1] = 2.0f * src, want[2] = 3.0f * src;
        break;
    }
    }
}

int main() {
    int devices = 0;
    if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
        printf("no CUDA device\n");
        return 0;
    }
    float* d = nullptr;
    const size_t count = (size_t)Patterns * 32 * A;
    if (cudaMalloc(&d, count * sizeof(float)) != cudaSuccess) return 1;
    patterns<<<1, 32>>>(d);
    static float h[Patterns * 32 * A];
    if (cudaMemcpy(h, d, sizeof h, cudaMemcpyDeviceToHost) != cudaSuccess) {
        printf("kernel failed\n");
        return 1;
    }
    cudaFree(d);
    int bad = 0;
    for (int k = 0; k < Patterns; ++k) {
        printf("%-20s lanes 0..7:", kNames[k]);
        for (int lane = 0; lane < 32; ++lane) {
            float want[A];
            model(k, lane, want);
            for (int a = 0; a < A; ++a) bad += h[(k * 32 + lane) * A + a] != want[a];
            if (lane < 8) printf(" %g", h[(k * 32 + lane) * A]);
        }
        printf("\n");
    }
    printf("%s\n", bad ? "FAILED" : "all patterns match the CPU");
    return bad ? 1 : 0;
}
