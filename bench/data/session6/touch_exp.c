// first-touch cost experiment: fresh 4.3 GB arrays, huge-page advice or not, parallel touch, after a fragmenting workload or not
#define _GNU_SOURCE
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
static double now(void){struct timespec t;clock_gettime(CLOCK_MONOTONIC,&t);return t.tv_sec+t.tv_nsec*1e-9;}
static void *get(size_t b,int huge,int populate){
  void *p=mmap(NULL,b,PROT_READ|PROT_WRITE,MAP_PRIVATE|MAP_ANONYMOUS|(populate?MAP_POPULATE:0),-1,0);
  if(p==MAP_FAILED)return NULL;
  if(huge==1)madvise(p,b,MADV_HUGEPAGE); else if(huge==2) madvise(p,b,MADV_NOHUGEPAGE);
  return p;}
static double touch(char*p,size_t b){double t=now();
#pragma omp parallel for schedule(static)
  for(size_t i=0;i<b;i+=4096)p[i]=1;
  return now()-t;}
static double copy(char*p,size_t b,char*src,size_t sb){double t=now();
#pragma omp parallel for schedule(static)
  for(size_t i=0;i<b;i+=(1<<20)) memcpy(p+i,src+(i%sb),(b-i)<(1<<20)?(b-i):(1<<20));
  return now()-t;}
int main(int argc,char**argv){
  size_t b=(size_t)4300<<20; int frag=argc>1?atoi(argv[1]):0;
  if(frag){ // a workload like bench_nightly's: several GB malloc'd, touched, some freed
    size_t fb=(size_t)frag<<30; char*f=malloc(fb); memset(f,3,fb); char*g=malloc(fb/2); memset(g,4,fb/2); free(f);
    printf("fragmented: %d GiB touched and freed, %d/2 kept\n",frag,frag);}
  char *src=malloc(1<<30); memset(src,7,1<<30);
  const char*names[]={"default","MADV_HUGEPAGE","MADV_NOHUGEPAGE"};
  for(int rep=0;rep<2;rep++) for(int h=0;h<3;h++){
    char*p=get(b,h,0); double t1=touch(p,b); munmap(p,b);
    p=get(b,h,0); double t2=copy(p,b,src,1<<30); double t3=copy(p,b,src,1<<30); munmap(p,b);
    printf("%-16s touch %.3f s  copy-into-fresh %.3f s (%.1f GB/s)  copy-again %.3f s (%.1f GB/s)  threads %d\n",names[h],t1,t2,b/t2/1e9,t3,b/t3/1e9,omp_get_max_threads());}
  double t=now(); char*p=get(b,0,1); printf("MAP_POPULATE (one thread) %.3f s\n",now()-t); munmap(p,b);
  return 0;}
