// Integer (and FP32, for reference) VALU issue rates of an NVIDIA GPU, per SM per SM clock.
//
// Why: archspecs/a100.yaml, h100.yaml and h200.yaml take their integer rates (pipes.valu.int) from
// NVIDIA's architecture blogs (64 INT32 lanes per SM; IMAD-based INT32 TOPS); this measures them on
// the GPU it runs on, in SM cycles (clock64), so the clock does not enter.
//
// Kernel k<O>: 8 independent dependency chains per thread of one operation, unrolled 32 times, 4
// blocks of 256 threads per SM (32 warps). O = 0 FFMA, 1 IMAD (x*m+c), 2 32-bit add, 3 xor,
// 4 funnel shift (SHF), 5 four IMAD chains beside four add chains. Each block records its smid and
// its first and last clock64; per SM: source operations of its blocks / (last end - first start),
// the median over SMs is printed. ptxas may fuse two source ops into one LOP3 or split adds
// between IADD3 and IMAD.IADD: count the SASS (`cuobjdump -sass`) to turn source ops into
// instructions. The code below is exactly what ran for benchmarks/device/results/h100-int-rates-2026-11-26.json
// (sent to the machine compressed, this header stripped):
//
//   nvcc -O3 -arch=sm_90 -o ir benchmarks/device/int_rates.cu && ./ir && cuobjdump -sass ir
#include <cstdio>
#include <vector>
#include <algorithm>
#define U 32
template<int O>__global__ void k(unsigned*o,unsigned a,unsigned m,unsigned c,int n,long long*t,unsigned*s){unsigned x[8];float f[8];float fm=__uint_as_float(0x3f7ffffeu),fc=1e-30f*(a|1);
#pragma unroll
for(int j=0;j<8;j++){x[j]=threadIdx.x*(j+3)^a;f[j]=x[j];}__syncthreads();long long b=clock64();for(int i=0;i<n;i++){
#pragma unroll
for(int u=0;u<U;u++){
#pragma unroll
for(int j=0;j<8;j++){if(O==0)f[j]=fmaf(f[j],fm,fc);if(O==1)x[j]=x[j]*m+c;if(O==2)x[j]+=x[(j+1)&7];if(O==3)x[j]^=x[(j+1)&7];if(O==4)x[j]=__funnelshift_l(x[j],x[j],x[(j+1)&7]);if(O==5){if(j<4)x[j]=x[j]*m+c;else x[j]+=x[((j+1)&3)+4];}}}}
long long e=clock64();__syncthreads();unsigned r=0;for(int j=0;j<8;j++)r+=x[j]+__float_as_uint(f[j]);o[blockIdx.x*256+threadIdx.x]=r;if(!threadIdx.x){t[2*blockIdx.x]=b;t[2*blockIdx.x+1]=e;unsigned q;asm volatile("mov.u32 %0,%%smid;":"=r"(q));s[blockIdx.x]=q;}}
template<int O>void r(const char*nm,int S,int n){int B=S*4;unsigned*o,*s;long long*t;cudaMalloc(&o,B*1024);cudaMalloc(&s,B*4);cudaMalloc(&t,B*16);k<O><<<B,256>>>(o,12345,2654435761u,7,8,t,s);k<O><<<B,256>>>(o,12345,2654435761u,7,n,t,s);cudaDeviceSynchronize();std::vector<long long>h(2*B);std::vector<unsigned>q(B);cudaMemcpy(h.data(),t,B*16,cudaMemcpyDeviceToHost);cudaMemcpy(q.data(),s,B*4,cudaMemcpyDeviceToHost);std::vector<double>v;for(int z=0;z<1024;z++){long long lo=-1,hi=-1;int c=0;for(int i=0;i<B;i++)if((int)q[i]==z){lo=(lo<0||h[2*i]<lo)?h[2*i]:lo;hi=std::max(hi,h[2*i+1]);c++;}if(c)v.push_back(c*256.0*n*U*8/(hi-lo));}std::sort(v.begin(),v.end());printf("{\"kernel\":\"%s\",\"sms\":%zu,\"src_ops_per_clk_sm\":%.2f,\"min\":%.2f,\"max\":%.2f,\"err\":\"%s\"}\n",nm,v.size(),v[v.size()/2],v[0],v.back(),cudaGetErrorString(cudaGetLastError()));}
int main(){cudaDeviceProp p;cudaGetDeviceProperties(&p,0);int S=p.multiProcessorCount,n=4096;printf("{\"device\":\"%s\",\"sms\":%d}\n",p.name,S);r<0>("ffma",S,n);r<1>("imad",S,n);r<2>("iadd",S,n);r<3>("xor",S,n);r<4>("shf",S,n);r<5>("imad+iadd",S,n);}
