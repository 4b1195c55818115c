CREATE TABLE tight(a INT,b AS a*2+1,c AS(a-1)/2,d AS a||'x',e AS a<=1,f AS a<>2,WATERMARK FOR t AS t,t TIMESTAMP(3))WITH('connector'='datagen');
